#include "auth/admin_auth.h"

#include <gtest/gtest.h>

#include "auth/admin_token_check.h"
#include "auth/sha256.h"
#include "fakes/manual_clock.h"

namespace trainwatch::auth {
namespace {

constexpr const char* kToken = "correct-horse-battery-staple";

TEST(Sha256Test, KnownDigest) {
  EXPECT_EQ(auth::sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(AdminAuthTest, AcceptsPlainAndHashedTokensAndNothingElse) {
  testing::ManualClock clock;
  AuthConfig config;
  config.admin_tokens = {kToken, "sha256:" + auth::sha256_hex("second-token-0123456789")};
  AdminAuth auth(config, clock);
  EXPECT_TRUE(auth.enabled());
  EXPECT_TRUE(auth.token_valid(kToken));
  EXPECT_TRUE(auth.token_valid("second-token-0123456789"));
  EXPECT_FALSE(auth.token_valid("wrong"));
  EXPECT_FALSE(auth.token_valid(""));
  // The digest itself is not a token.
  EXPECT_FALSE(auth.token_valid(auth::sha256_hex(kToken)));
}

TEST(AdminAuthTest, NoTokensMeansNobodyLogsIn) {
  testing::ManualClock clock;
  AdminAuth auth(AuthConfig{}, clock);
  EXPECT_FALSE(auth.enabled());
  EXPECT_FALSE(auth.login("anything-at-all-long").has_value());
}

TEST(AdminAuthTest, SessionsCarryTheirOwnCsrfTokenAndExpire) {
  testing::ManualClock clock;
  AuthConfig config;
  config.admin_tokens = {kToken};
  config.session_ttl = Millis(60'000);
  AdminAuth auth(config, clock);
  EXPECT_FALSE(auth.login("wrong").has_value());
  auto a = auth.login(kToken);
  auto b = auth.login(kToken);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->id.size(), 64u);
  EXPECT_NE(a->id, b->id);
  EXPECT_NE(a->csrf_token, b->csrf_token);
  EXPECT_EQ(auth.session(a->id)->csrf_token, a->csrf_token);
  auth.logout(a->id);
  EXPECT_FALSE(auth.session(a->id).has_value());
  clock.advance(Millis(60'000));
  EXPECT_FALSE(auth.session(b->id).has_value());
}

TEST(AdminAuthTest, SessionsAreBounded) {
  testing::ManualClock clock;
  AuthConfig config;
  config.admin_tokens = {kToken};
  AdminAuth auth(config, clock);
  auto first = auth.login(kToken);
  for (size_t i = 0; i < AdminAuth::kMaxSessions; ++i) {
    clock.advance(Millis(1));
    ASSERT_TRUE(auth.login(kToken).has_value());
  }
  EXPECT_FALSE(auth.session(first->id).has_value());  // the oldest made room
}

TEST(AdminAuthTest, ReloadWithOtherTokensRevokesTheOldAndDropsSessions) {
  testing::ManualClock clock;
  AuthConfig config;
  config.admin_tokens = {kToken};
  AdminAuth auth(config, clock);
  auto session = auth.login(kToken);
  ASSERT_TRUE(session);

  // The same set again (written in another order, one hashed): nothing changes.
  config.admin_tokens = {"sha256:" + auth::sha256_hex(kToken), kToken};
  EXPECT_FALSE(auth.reconfigure(config));
  EXPECT_TRUE(auth.session(session->id).has_value());

  config.admin_tokens = {"the-new-token-0123456789"};
  EXPECT_TRUE(auth.reconfigure(config));
  EXPECT_FALSE(auth.token_valid(kToken));
  EXPECT_TRUE(auth.token_valid("the-new-token-0123456789"));
  EXPECT_FALSE(auth.session(session->id).has_value());
  EXPECT_FALSE(auth.login(kToken).has_value());

  // Emptied: nobody may change anything any more.
  EXPECT_TRUE(auth.reconfigure(AuthConfig{}));
  EXPECT_FALSE(auth.enabled());
}

TEST(AdminAuthTest, WrongTokensFromOneSourceAreThrottledNotOthers) {
  testing::ManualClock clock;
  AuthConfig config;
  config.admin_tokens = {kToken};
  AdminAuth auth(config, clock);
  auto check = [&](std::string_view token, std::string_view address) {
    return check_token(auth, CredentialKind::kBearer, token, address).gate;
  };
  const GuessLimits limits;
  const auto burst = static_cast<int>(limits.per_source.burst);
  for (int i = 0; i < burst; ++i)
    ASSERT_EQ(check("wrong-token-" + std::to_string(i), "10.0.0.1").verdict, GateVerdict::kRefused) << i;
  // Out of attempts: not even the right token is looked at, and the caller is told how
  // long to wait, one refill period at most.
  const GateResult throttled = check(kToken, "10.0.0.1");
  ASSERT_EQ(throttled.verdict, GateVerdict::kThrottled);
  EXPECT_GT(throttled.retry_after, Millis(0));
  EXPECT_LE(throttled.retry_after, limits.per_source.refill_every);
  // Another address is not held back, right or wrong.
  EXPECT_EQ(check(kToken, "10.0.0.2").verdict, GateVerdict::kAccepted);
  EXPECT_EQ(check("wrong-token-x", "10.0.0.2").verdict, GateVerdict::kRefused);

  // One attempt comes back per refill period, and one wrong token spends it again.
  clock.advance(throttled.retry_after);
  EXPECT_EQ(check("wrong-token-y", "10.0.0.1").verdict, GateVerdict::kRefused);
  EXPECT_EQ(check(kToken, "10.0.0.1").verdict, GateVerdict::kThrottled);

  // A right token does not spend attempts.
  clock.advance(limits.per_source.refill_every);
  for (int i = 0; i < 3 * burst; ++i)
    ASSERT_EQ(check(kToken, "10.0.0.1").verdict, GateVerdict::kAccepted) << i;
}

}  // namespace
}  // namespace trainwatch::auth
