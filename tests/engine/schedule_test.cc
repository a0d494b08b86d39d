#include "engine/schedule.h"

#include <gtest/gtest.h>

#include <map>

namespace trainwatch::engine {
namespace {

TEST(FirstCheckOffset, SpreadsTenThousandMonitorsEvenlyOverTheWindow) {
  const size_t count = 10'000;
  std::map<int64_t, int> per_second;
  for (size_t i = 0; i < count; ++i) {
    Millis offset = first_check_offset(i, count, Millis(10'000));
    ASSERT_GE(offset.count(), 0);
    ASSERT_LT(offset.count(), 10'000);
    ++per_second[offset.count() / 1000];
  }
  // 10 seconds, 1,000 first checks in each: never all at once.
  ASSERT_EQ(per_second.size(), 10u);
  for (const auto& [second, n] : per_second) EXPECT_EQ(n, 1000) << second;
}

TEST(FirstCheckOffset, ShortIntervalsSpreadWithinTheirInterval) {
  EXPECT_EQ(first_check_offset(0, 4, Millis(1000)), Millis(0));
  EXPECT_EQ(first_check_offset(3, 4, Millis(1000)), Millis(750));
  EXPECT_EQ(first_check_offset(0, 0, Millis(1000)), Millis(0));
}

TEST(NextDue, RunsAtAFixedRate) {
  MonoTime start{};
  EXPECT_EQ(next_due(start, Millis(1000), start + Millis(30)), start + Millis(1000));
}

TEST(NextDue, SkipsSlotsAlreadyMissed) {
  MonoTime start{};
  // Due at 0, interval 1s, but it is 3.5s now: the next slot is 4s, not 1s, 2s, 3s in a burst.
  EXPECT_EQ(next_due(start, Millis(1000), start + Millis(3500)), start + Millis(4000));
  EXPECT_EQ(next_due(start, Millis(1000), start + Millis(1000)), start + Millis(2000));
}

TEST(NextDue, ACheckThatStartedLateIsNotFollowedByAnotherWithinHalfAnInterval) {
  MonoTime start{};
  // Due at 0 with a 2 s interval, started 1.5 s late (a pause): the slot at 2 s would come
  // half a second after it, so the next check is at 4 s.
  EXPECT_EQ(next_due_after_start(start, Millis(2000), start + Millis(1500)), start + Millis(4000));
  // On time, or late by less than half an interval: the next slot, on the grid.
  EXPECT_EQ(next_due_after_start(start, Millis(2000), start + Millis(5)), start + Millis(2000));
  EXPECT_EQ(next_due_after_start(start, Millis(2000), start + Millis(900)), start + Millis(2000));
  // Late by slots already missed: the first slot half an interval past now.
  EXPECT_EQ(next_due_after_start(start, Millis(2000), start + Millis(5500)), start + Millis(8000));
}

}  // namespace
}  // namespace trainwatch::engine
