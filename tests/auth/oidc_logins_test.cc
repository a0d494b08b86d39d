#include "auth/oidc_logins.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "auth/sso_claims.h"
#include "fakes/manual_clock.h"

namespace trainwatch::auth {
namespace {

TEST(OidcLoginsTest, AStateIsGoodOnceAndOnlyFromItsBrowser) {
  testing::ManualClock clock;
  OidcLogins logins(clock);
  auto a = logins.open();
  auto b = logins.open();
  ASSERT_TRUE(a && b);
  EXPECT_NE(a->state, b->state);
  EXPECT_NE(a->nonce, a->code_verifier);
  EXPECT_FALSE(logins.redeem(a->state, b->browser));  // another browser: and it is gone
  EXPECT_FALSE(logins.redeem(a->state, a->browser));
  auto redeemed = logins.redeem(b->state, b->browser);
  ASSERT_TRUE(redeemed);
  EXPECT_EQ(redeemed->nonce, b->nonce);
  EXPECT_FALSE(logins.redeem(b->state, b->browser));
  EXPECT_EQ(logins.size(), 0u);
}

TEST(OidcLoginsTest, LoginsExpireAfterTenMinutes) {
  testing::ManualClock clock;
  OidcLogins logins(clock);
  auto a = logins.open();
  clock.advance(OidcLogins::kTtl - Millis(1));
  auto b = logins.open();
  clock.advance(Millis(1));
  EXPECT_FALSE(logins.redeem(a->state, a->browser));
  EXPECT_TRUE(logins.redeem(b->state, b->browser));
}

TEST(PkceTest, S256ChallengeMatchesRfc7636) {
  // RFC 7636 appendix B.
  EXPECT_EQ(pkce_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
}

TEST(SsoClaimsTest, TheHighestMappedRoleWinsAndNoMatchIsNoRole) {
  const std::vector<GroupRole> mapping = {
      {"researchers", Role::kEditor}, {"ml-platform", Role::kAdmin}, {"everyone", Role::kViewer}};
  EXPECT_EQ(role_for_groups(mapping, {"everyone", "ml-platform"}), Role::kAdmin);
  EXPECT_EQ(role_for_groups(mapping, {"researchers", "everyone"}), Role::kEditor);
  EXPECT_EQ(role_for_groups(mapping, {"sales"}), std::nullopt);
  EXPECT_EQ(role_for_groups(mapping, {}), std::nullopt);
}

TEST(SsoClaimsTest, TheNameFallsBackToSubAndGroupsMayBeOneString) {
  boost::json::object claims{{"sub", "ABC-123"}, {"groups", "researchers"}};
  EXPECT_EQ(sso_user_name(claims, "preferred_username"), "abc-123");
  claims["preferred_username"] = "Alice";
  EXPECT_EQ(sso_user_name(claims, "preferred_username"), "alice");
  EXPECT_EQ(sso_groups(claims, "groups"), std::vector<std::string>{"researchers"});
  EXPECT_TRUE(sso_groups(claims, "roles").empty());
}

}  // namespace
}  // namespace trainwatch::auth
