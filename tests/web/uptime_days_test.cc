#include "web/uptime_days.h"

#include <gtest/gtest.h>

namespace trainwatch::web {
namespace {

constexpr int64_t kDay = 86'400'000;
constexpr int64_t kToday = 20'000 * kDay;  // 2024-10-04, a UTC midnight

TEST(UptimeDaysTest, NinetySegmentsEndingToday) {
  auto days = day_segments({}, {}, kToday + 5000, 90);
  ASSERT_EQ(days.size(), 90u);
  EXPECT_EQ(days.back().day_ms, kToday);
  EXPECT_EQ(days.front().day_ms, kToday - 89 * kDay);
  EXPECT_EQ(days.back().date, "2024-10-04");
  EXPECT_EQ(days.back().level, "none");
  EXPECT_EQ(days.back().label, "2024-10-04: no data");
}

TEST(UptimeDaysTest, LevelsFollowTheUptime) {
  std::vector<UptimeBucket> buckets = {
      {kToday - 3 * kDay, 10000, 10000, 0},  // 100 %
      {kToday - 2 * kDay, 1000, 990, 0},     // 99 %
      {kToday - kDay, 100, 50, 0},           // 50 %
      {kToday - 200 * kDay, 5, 0, 0},        // outside the window: ignored
  };
  std::vector<IncidentStart> incidents = {{kToday - kDay + 10}, {kToday - kDay + 20}};
  auto days = day_segments(buckets, incidents, kToday, 90);
  EXPECT_EQ(days[86].level, "ok");
  EXPECT_EQ(days[87].level, "warn");
  EXPECT_EQ(days[88].level, "bad");
  EXPECT_EQ(days[88].incidents, 2);
  EXPECT_EQ(days[88].label, "2024-10-03: 50.00% uptime, 2 incidents");
  EXPECT_EQ(days[89].level, "none");
}

TEST(UptimeDaysTest, PercentNeverRoundsUpToAHundred) {
  EXPECT_EQ(format_percent(99.999), "99.99%");
  EXPECT_EQ(format_percent(100), "100.00%");
  std::vector<UptimeBucket> buckets = {{0, 3, 2, 0}, {kDay, 1, 1, 0}};
  EXPECT_DOUBLE_EQ(*uptime_percent(buckets), 75.0);
  EXPECT_FALSE(uptime_percent({}).has_value());
}

}  // namespace
}  // namespace trainwatch::web
