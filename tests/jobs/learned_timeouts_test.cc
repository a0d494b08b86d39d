#include <gtest/gtest.h>

#include "jobs/learned_timeouts.h"

namespace trainwatch::jobs {
namespace {

TEST(LearnedTimeouts, FloorUntilLearnedThenFiveTimesTheSmoothedLongestGap) {
  JobThresholds t;
  t.step_timeout_min = Millis(2'000);
  LearnedTimeouts l;
  EXPECT_EQ(l.step_timeout(t).value, Millis(2'000));
  EXPECT_FALSE(l.step_timeout(t).learned);
  l.observe_step_gap(Millis(200));
  EXPECT_EQ(l.step_timeout(t).value, Millis(2'000));  // 5 x 200ms is under the floor
  l.observe_step_gap(Millis(1'000));                  // rises at once
  EXPECT_EQ(l.step_timeout(t).value, Millis(5'000));
  EXPECT_TRUE(l.step_timeout(t).learned);
  l.observe_step_gap(Millis(200));  // decays by 5% of the difference
  EXPECT_EQ(*l.smoothed_step_gap(), Millis(960));
  EXPECT_EQ(l.step_timeout(t).value, Millis(4'800));
}

TEST(LearnedTimeouts, FixedConfigWins) {
  JobThresholds t;
  t.step_timeout = Millis(90'000);
  t.checkpoint_timeout = Millis(30'000);
  LearnedTimeouts l;
  l.observe_step_gap(Millis(60'000));
  l.observe_checkpoint(Millis(600'000));
  EXPECT_EQ(l.step_timeout(t).value, Millis(90'000));
  EXPECT_EQ(l.checkpoint_timeout(t).value, Millis(30'000));
}

TEST(LearnedTimeouts, CheckpointTimeoutFromTheLongestCheckpointAtLeastTheFloor) {
  JobThresholds t;  // floor 10 min
  LearnedTimeouts l;
  l.observe_checkpoint(Millis(60'000));
  EXPECT_EQ(l.checkpoint_timeout(t).value, Millis(600'000));
  l.observe_checkpoint(Millis(180'000));
  l.observe_checkpoint(Millis(30'000));
  EXPECT_EQ(l.checkpoint_timeout(t).value, Millis(900'000));
  EXPECT_TRUE(l.checkpoint_timeout(t).learned);
}

}  // namespace
}  // namespace trainwatch::jobs
