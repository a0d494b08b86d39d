#include "auth/admin_auth.h"

#include <gtest/gtest.h>

#include "auth/sha256.h"
#include "fakes/manual_clock.h"

namespace trainwatch::auth {
namespace {

constexpr const char* kToken = "correct-horse-battery-staple";

TEST(Sha256Test, KnownDigest) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_TRUE(constant_time_equal("abc", "abc"));
  EXPECT_FALSE(constant_time_equal("abc", "abd"));
  EXPECT_FALSE(constant_time_equal("abc", "ab"));
}

TEST(AdminAuthTest, AcceptsPlainAndHashedTokensAndNothingElse) {
  testing::ManualClock clock;
  AuthConfig config;
  config.admin_tokens = {kToken, "sha256:" + sha256_hex("second-token-0123456789")};
  AdminAuth auth(config, clock);
  EXPECT_TRUE(auth.enabled());
  EXPECT_TRUE(auth.token_valid(kToken));
  EXPECT_TRUE(auth.token_valid("second-token-0123456789"));
  EXPECT_FALSE(auth.token_valid("wrong"));
  EXPECT_FALSE(auth.token_valid(""));
  // The digest itself is not a token.
  EXPECT_FALSE(auth.token_valid(sha256_hex(kToken)));
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

}  // namespace
}  // namespace trainwatch::auth
