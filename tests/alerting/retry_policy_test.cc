#include "alerting/retry_policy.h"

#include <gtest/gtest.h>

#include "fakes/manual_clock.h"

namespace trainwatch::alerting {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

TEST(RetryPolicyTest, BackoffDoublesFromOneSecondUpToOneHour) {
  RetryPolicy p;
  EXPECT_EQ(p.backoff(1, 0.0), seconds(1));
  EXPECT_EQ(p.backoff(2, 0.0), seconds(2));
  EXPECT_EQ(p.backoff(3, 0.0), seconds(4));
  EXPECT_EQ(p.backoff(12, 0.0), seconds(2048));
  EXPECT_EQ(p.backoff(13, 0.0), hours(1));  // 4096 s capped
  EXPECT_EQ(p.backoff(10'000, 0.0), hours(1));
}

TEST(RetryPolicyTest, JitterAddsUpToHalfTheDelayWithinTheBounds) {
  RetryPolicy p;
  EXPECT_EQ(p.backoff(1, 1.0), Millis(1500));  // never under 1 s
  EXPECT_EQ(p.backoff(3, 0.5), seconds(5));
  EXPECT_EQ(p.backoff(12, 1.0), seconds(3072));  // 2048 s + 1024 s
  EXPECT_EQ(p.backoff(13, 1.0), hours(1));       // never over 1 h
  EXPECT_EQ(p.backoff(1, -3.0), seconds(1));     // out-of-range randomness is clamped
}

TEST(RetryPolicyTest, FourHundredsArePermanentExceptTimeoutAndTooManyRequests) {
  EXPECT_EQ(judge_attempt(true, false, 200), AttemptVerdict::kDelivered);
  EXPECT_EQ(judge_attempt(true, false, 204), AttemptVerdict::kDelivered);
  EXPECT_EQ(judge_attempt(true, false, 400), AttemptVerdict::kPermanent);
  EXPECT_EQ(judge_attempt(true, false, 404), AttemptVerdict::kPermanent);
  EXPECT_EQ(judge_attempt(true, false, 408), AttemptVerdict::kRetry);
  EXPECT_EQ(judge_attempt(true, false, 429), AttemptVerdict::kRetry);
  EXPECT_EQ(judge_attempt(true, false, 500), AttemptVerdict::kRetry);
  EXPECT_EQ(judge_attempt(true, false, 503), AttemptVerdict::kRetry);
  EXPECT_EQ(judge_attempt(false, false, 0), AttemptVerdict::kRetry);
  EXPECT_EQ(judge_attempt(false, true, 535), AttemptVerdict::kPermanent);
}

// A receiver that is down for a day: the manual clock walks through every retry.
TEST(RetryPolicyTest, GivesUpOnceTheNextTryWouldFallPastTwentyFourHours) {
  testing::ManualClock clock;
  RetryPolicy p;
  const SystemTime first = clock.system_time();
  int attempts = 1;
  for (;; ++attempts) {
    RetryDecision d = decide_retry(p, attempts, first, clock.system_time(), std::nullopt, 0.0);
    if (d.give_up) break;
    clock.advance(std::chrono::duration_cast<Millis>(d.next_attempt - clock.system_time()));
  }
  const auto elapsed = clock.system_time() - first;
  EXPECT_LE(elapsed, hours(24));
  EXPECT_GT(elapsed, hours(23));
  // 1+2+...+2048 s (~68 min) then hourly: 12 doublings and about 22 hourly tries.
  EXPECT_GE(attempts, 30);
  EXPECT_LE(attempts, 40);
}

TEST(RetryPolicyTest, RetryAfterIsHonouredButCapped) {
  testing::ManualClock clock;
  RetryPolicy p;
  const SystemTime now = clock.system_time();
  EXPECT_EQ(decide_retry(p, 1, now, now, seconds(30), 1.0).next_attempt, now + seconds(30));
  EXPECT_EQ(decide_retry(p, 1, now, now, hours(5), 1.0).next_attempt, now + hours(1));
}

TEST(RetryPolicyTest, ParsesRetryAfterSecondsAndDates) {
  const SystemTime now = std::chrono::system_clock::from_time_t(1445412480);  // Wed, 21 Oct 2015 07:28:00 GMT
  EXPECT_EQ(parse_retry_after("120", now), seconds(120));
  EXPECT_EQ(parse_retry_after(" 0 ", now), seconds(0));
  EXPECT_EQ(parse_retry_after("Wed, 21 Oct 2015 07:29:00 GMT", now), seconds(60));
  EXPECT_EQ(parse_retry_after("Wed, 21 Oct 2015 07:00:00 GMT", now), seconds(0));  // past
  EXPECT_EQ(parse_retry_after("soon", now), std::nullopt);
  EXPECT_EQ(parse_retry_after("12abc", now), std::nullopt);
  EXPECT_EQ(parse_retry_after("", now), std::nullopt);
}

}  // namespace
}  // namespace trainwatch::alerting
