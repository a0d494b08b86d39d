#include "views/time_uptime.h"

#include <gtest/gtest.h>

#include "views/shown_state.h"

namespace trainwatch::views {
namespace {

constexpr int64_t kMinute = 60'000;
constexpr int64_t kHour = 60 * kMinute;
constexpr int64_t kDay = 24 * kHour;
constexpr int64_t kMidnight = 20'000 * kDay;

Incident incident(int64_t from, std::optional<int64_t> to) {
  Incident i;
  i.started = from_unix_ms(from);
  if (to) i.ended = from_unix_ms(*to);
  return i;
}

double percent(const std::vector<UptimeBucket>& buckets) {
  int64_t checks = 0, ok = 0;
  for (const auto& b : buckets) {
    checks += b.checks;
    ok += b.ok;
  }
  return 100.0 * static_cast<double>(ok) / static_cast<double>(checks);
}

// The outage: one good ping, then DOWN for 80 of the 81 minutes since. Counting
// stored results (one good, one failed) said 50 %; time says 1.23 %.
TEST(TimeUptime, AHeartbeatDownForEightyOfEightyOneMinutesIsAboutOnePercentUp) {
  const int64_t first = kMidnight + 10 * kHour;
  const int64_t now = first + 81 * kMinute;
  const std::vector<Incident> incidents = {incident(first + kMinute, std::nullopt)};
  const auto hourly = time_buckets(incidents, first, now, kHour, now - kDay, now + 1);
  ASSERT_EQ(hourly.size(), 2u);
  EXPECT_EQ(hourly[0].start_ms, first);
  EXPECT_EQ(hourly[0].checks, 3600);
  EXPECT_EQ(hourly[0].ok, 60);
  EXPECT_EQ(hourly[1].checks, 21 * 60);
  EXPECT_EQ(hourly[1].ok, 0);
  EXPECT_NEAR(percent(hourly), 100.0 / 81, 0.01);
  // The same from daily buckets, and over a 30-day window that began long before.
  EXPECT_NEAR(percent(time_buckets(incidents, first, now, kDay, now - 30 * kDay, now + 1)), 100.0 / 81, 0.01);
}

TEST(TimeUptime, OnlyTheWindowAndTheWatchedTimeCount) {
  const int64_t now = kMidnight + 12 * kHour;
  // Watched for two days; down from 36 h to 35 h ago (before the window) and for the last 6 h.
  const std::vector<Incident> incidents = {incident(now - 36 * kHour, now - 35 * kHour),
                                           incident(now - 6 * kHour, std::nullopt)};
  const auto day = time_buckets(incidents, now - 48 * kHour, now, kHour, now - kDay, now + 1);
  EXPECT_NEAR(percent(day), 75.0, 0.01);
  // Not watched yet in a bucket: no bucket, as an empty rollup.
  EXPECT_TRUE(time_buckets(incidents, now, now, kHour, now - kDay, now + 1).empty());
}

TEST(TimeUptime, AClosedIncidentCountsOnlyItsOwnSpan) {
  const int64_t now = kMidnight + kHour;
  const std::vector<Incident> incidents = {incident(kMidnight + 15 * kMinute, kMidnight + 30 * kMinute)};
  const auto buckets = time_buckets(incidents, kMidnight, now, kHour, kMidnight, now + 1);
  ASSERT_EQ(buckets.size(), 1u);
  EXPECT_NEAR(percent(buckets), 75.0, 0.01);
}

TEST(ShownState, MaintenanceShowsOverEveryStatusButPaused) {
  EXPECT_EQ(shown_code(shown_state(MonitorStatus::kDown, true)), "maintenance");
  EXPECT_EQ(shown_code(shown_state(MonitorStatus::kUp, true)), "maintenance");
  EXPECT_EQ(shown_code(shown_state(MonitorStatus::kPaused, true)), "paused");
  EXPECT_EQ(shown_code(shown_state(MonitorStatus::kDown, false)), "down");
  EXPECT_EQ(shown_word(ShownState::kMaintenance), "Maintenance");
}

}  // namespace
}  // namespace trainwatch::views
