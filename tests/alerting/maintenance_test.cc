#include "alerting/maintenance.h"

#include <gtest/gtest.h>

#include "config/loader.h"
#include "core/time_format.h"

namespace trainwatch::alerting {
namespace {

SystemTime at(const char* text) { return *parse_rfc3339(text); }

std::vector<MaintenanceWindow> windows(const std::string& yaml) {
  LoadedConfig loaded = load_config_text(
      "monitors:\n"
      "  - {name: a, type: tcp, host: h, port: 1, tags: [gpu]}\n"
      "  - {name: b, type: tcp, host: h, port: 2}\n"
      "maintenance:\n" +
          yaml,
      "test.yaml");
  EXPECT_TRUE(loaded.config.has_value()) << (loaded.errors.empty() ? "" : loaded.errors[0].to_string());
  return loaded.config ? loaded.config->maintenance : std::vector<MaintenanceWindow>{};
}

TEST(MaintenanceTest, AbsoluteWindowHoldsOnlyItsMonitorsAndOnlyInside) {
  auto w = windows("  - {monitors: [a], start: '2026-05-01T02:00:00Z', end: '2026-05-01T04:00:00Z'}\n");
  EXPECT_EQ(held_until(w, "a", {}, at("2026-05-01T01:59:59Z")), std::nullopt);
  EXPECT_EQ(held_until(w, "a", {}, at("2026-05-01T02:00:00Z")), at("2026-05-01T04:00:00Z"));
  EXPECT_EQ(held_until(w, "a", {}, at("2026-05-01T03:59:59Z")), at("2026-05-01T04:00:00Z"));
  EXPECT_EQ(held_until(w, "a", {}, at("2026-05-01T04:00:00Z")), std::nullopt);  // the end is not inside
  EXPECT_EQ(held_until(w, "b", {}, at("2026-05-01T03:00:00Z")), std::nullopt);
}

TEST(MaintenanceTest, DailyWindowWrapsPastMidnight) {
  auto w = windows("  - {tags: [gpu], daily: '23:00-01:00'}\n");
  EXPECT_EQ(held_until(w, "a", {"gpu"}, at("2026-05-01T23:30:00Z")), at("2026-05-02T01:00:00Z"));
  EXPECT_EQ(held_until(w, "a", {"gpu"}, at("2026-05-02T00:30:00Z")), at("2026-05-02T01:00:00Z"));
  EXPECT_EQ(held_until(w, "a", {"gpu"}, at("2026-05-02T01:00:00Z")), std::nullopt);
  EXPECT_EQ(held_until(w, "a", {"gpu"}, at("2026-05-02T12:00:00Z")), std::nullopt);
  EXPECT_EQ(held_until(w, "a", {"cpu"}, at("2026-05-01T23:30:00Z")), std::nullopt);
}

TEST(MaintenanceTest, WeeklyWindowIsOnItsDayOnly) {
  auto w = windows("  - {monitors: [a], weekly: 'sun 02:00-04:00'}\n");
  // 2026-05-03 is a Sunday.
  EXPECT_EQ(held_until(w, "a", {}, at("2026-05-03T03:00:00Z")), at("2026-05-03T04:00:00Z"));
  EXPECT_EQ(held_until(w, "a", {}, at("2026-05-04T03:00:00Z")), std::nullopt);
  EXPECT_EQ(held_until(w, "a", {}, at("2026-05-10T02:00:00Z")), at("2026-05-10T04:00:00Z"));
}

TEST(MaintenanceTest, OverlappingWindowsAreFollowedToTheLastEnd) {
  auto w = windows(
      "  - {monitors: [a], start: '2026-05-01T02:00:00Z', end: '2026-05-01T03:00:00Z'}\n"
      "  - {monitors: [a], start: '2026-05-01T02:30:00Z', end: '2026-05-01T05:00:00Z'}\n");
  EXPECT_EQ(held_until(w, "a", {}, at("2026-05-01T02:10:00Z")), at("2026-05-01T05:00:00Z"));
}

// A snooze holds alerts as a window does; only the engine, which decides what the
// status pages show and what counts as up time, is given the planned work alone.
TEST(MaintenanceTest, ASnoozeHoldsAlertsButIsNotPlannedWork) {
  auto w = windows(
      "  - {monitors: [a], start: '2026-03-01T02:00:00Z', end: '2026-03-01T04:00:00Z', snooze: true}\n"
      "  - {tags: [gpu], daily: '23:00-01:00'}\n");
  ASSERT_EQ(w.size(), 2u);
  EXPECT_TRUE(w[0].snooze);
  EXPECT_FALSE(w[1].snooze);
  EXPECT_EQ(held_until(w, "a", {}, at("2026-03-01T03:00:00Z")), at("2026-03-01T04:00:00Z"));

  const auto planned = planned_work(w);
  ASSERT_EQ(planned.size(), 1u);
  EXPECT_FALSE(planned[0].snooze);
  EXPECT_EQ(held_until(planned, "a", {}, at("2026-03-01T03:00:00Z")), std::nullopt);
  EXPECT_EQ(held_until(planned, "a", {"gpu"}, at("2026-03-01T23:30:00Z")), at("2026-03-02T01:00:00Z"));
}

TEST(MaintenanceTest, BadWindowsAreConfigErrorsWithPositions) {
  LoadedConfig loaded = load_config_text(
      "monitors:\n"
      "  - {name: a, type: tcp, host: h, port: 1}\n"
      "maintenance:\n"
      "  - {monitors: [a], daily: '25:00-26:00'}\n"
      "  - {monitors: [nope], weekly: 'someday 01:00-02:00'}\n"
      "  - {daily: '01:00-02:00'}\n",
      "c.yaml");
  ASSERT_EQ(loaded.errors.size(), 3u);
  EXPECT_EQ(
      loaded.errors[0].to_string(),
      "c.yaml:4:28: maintenance[0].daily: found '25:00-26:00'; expected HH:MM-HH:MM in UTC such as 02:00-03:30");
  EXPECT_EQ(
      loaded.errors[1].to_string(),
      "c.yaml:5:32: maintenance[1].weekly: found 'someday 01:00-02:00'; expected a day (sun, mon, tue, wed, thu, "
      "fri, sat) and HH:MM-HH:MM in UTC");
  EXPECT_EQ(loaded.errors[2].to_string(),
            "c.yaml:6:5: maintenance[2].monitors: missing; expected `monitors: [names]` or `tags: [tags]`");
}

}  // namespace
}  // namespace trainwatch::alerting
