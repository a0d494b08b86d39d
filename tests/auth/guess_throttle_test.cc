#include "auth/guess_throttle.h"

#include <gtest/gtest.h>

#include <string>

#include "fakes/manual_clock.h"

namespace trainwatch::auth {
namespace {

// Small numbers, so the bounds are reached in a few calls: 3 at once, one a second, 4 keys.
constexpr GuessLimits kLimits{{3, Millis(1'000), 4}, {3, Millis(1'000), 4}};

// One whole attempt: begin, then a wrong credential.
bool guess(GuessThrottle& t, const std::string& source, const std::string& credential, MonoTime now) {
  if (t.begin(source, now)) return false;
  t.failed(source, credential, now);
  return true;
}

TEST(GuessThrottleTest, BurstThenOnePerRefillAndTheWaitIsExact) {
  testing::ManualClock clock;
  GuessThrottle t(kLimits);
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(guess(t, "a", "k" + std::to_string(i), clock.monotonic_time())) << i;
  EXPECT_EQ(t.begin("a", clock.monotonic_time()), Millis(1'000));
  clock.advance(Millis(400));
  EXPECT_EQ(t.begin("a", clock.monotonic_time()), Millis(600));  // a refused begin spends nothing
  clock.advance(Millis(600));
  EXPECT_TRUE(guess(t, "a", "k9", clock.monotonic_time()));
  EXPECT_TRUE(t.begin("a", clock.monotonic_time()));
}

TEST(GuessThrottleTest, SuccessesAreNeverCountedAndConcurrentChecksCannotOverspend) {
  testing::ManualClock clock;
  GuessThrottle t(kLimits);
  const MonoTime now = clock.monotonic_time();
  // Each begin reserves a unit before its check runs: three in flight at once, no fourth.
  for (int i = 0; i < 3; ++i) ASSERT_FALSE(t.begin("a", now)) << i;
  EXPECT_TRUE(t.begin("a", now));
  // They all succeed: every unit comes back, however often it happens.
  for (int i = 0; i < 3; ++i) t.succeeded("a", now);
  for (int round = 0; round < 100; ++round) {
    ASSERT_FALSE(t.begin("a", now)) << round;
    t.succeeded("a", now);
  }
}

TEST(GuessThrottleTest, OtherSourcesFailuresNeverMakeASourceWait) {
  testing::ManualClock clock;
  GuessThrottle t(kLimits);
  const MonoTime now = clock.monotonic_time();
  // A flood from many more sources than the table holds, each out of attempts.
  for (int s = 0; s < 100; ++s) {
    for (int i = 0; i < 5; ++i) guess(t, "flood-" + std::to_string(s), "k" + std::to_string(s * 10 + i), now);
  }
  // A source outside the flood is checked at once: there is no shared overflow bucket.
  EXPECT_FALSE(t.begin("admin", now));
  t.succeeded("admin", now);
  EXPECT_EQ(t.stats().sources, 4u);  // the bound held
  EXPECT_GT(t.stats().sources_forgotten, 0u);
}

TEST(GuessThrottleTest, AtTheBoundTheLeastRecentlyUsedSourceIsForgotten) {
  testing::ManualClock clock;
  GuessThrottle t(GuessLimits{kLimits.per_source, {3, Millis(1'000), 64}});  // room for every credential
  const MonoTime now = clock.monotonic_time();
  auto drain = [&](const std::string& source) {
    for (int i = 0; i < 3; ++i) guess(t, source, source + std::to_string(i), now);
  };
  // Four sources out of attempts fill the table.
  for (const char* s : {"a", "b", "c", "d"}) drain(s);
  for (const char* s : {"a", "b", "c", "d"}) ASSERT_TRUE(t.begin(s, now)) << s;
  // A fifth evicts the one touched longest ago, "a", which comes back with a full
  // allowance (the stated price of the bound) and is counted; the others still wait.
  drain("e");
  EXPECT_EQ(t.stats().sources, 4u);
  EXPECT_EQ(t.stats().sources_forgotten, 1u);
  for (const char* s : {"b", "c", "d", "e"}) EXPECT_TRUE(t.begin(s, now)) << s;
  EXPECT_FALSE(t.begin("a", now));
}

TEST(GuessThrottleTest, ACredentialUnderAttackIsNeverRefusedButCostsItsGuessersTheirAllowance) {
  testing::ManualClock clock;
  GuessThrottle t(kLimits);
  const MonoTime now = clock.monotonic_time();
  // Three sources, one wrong guess each at "alice": her bucket is now empty.
  for (const char* s : {"s1", "s2", "s3"}) ASSERT_TRUE(guess(t, s, "alice", now));
  // A fourth source guessing wrong at alice loses its whole allowance on its first guess.
  ASSERT_TRUE(guess(t, "s4", "alice", now));
  EXPECT_TRUE(t.begin("s4", now));
  // Alice herself, from her own source, is checked and gets in.
  EXPECT_FALSE(t.begin("alice-laptop", now));
  t.succeeded("alice-laptop", now);
  // Failures at other credentials cost one unit each, as before.
  ASSERT_TRUE(guess(t, "s5", "bob", now));
  EXPECT_FALSE(t.begin("s5", now));
}

}  // namespace
}  // namespace trainwatch::auth
