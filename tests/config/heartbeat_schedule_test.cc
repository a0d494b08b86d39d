// A heartbeat's `schedule` and `tz`: what loads, and every refusal with its file:line:col.
#include <gtest/gtest.h>

#include "config/loader.h"
#include "core/time_format.h"

namespace trainwatch {
namespace {

LoadedConfig load(const std::string& text) {
  return load_config_text(text, "tw.yaml", [](const std::string&) { return std::optional<std::string>(); });
}

// One heartbeat monitor with these lines under it (indented as list-entry keys).
std::string monitor(const std::string& lines) {
  return "monitors:\n  - name: nightly-backup\n    type: heartbeat\n" + lines;
}

std::vector<std::string> errors_of(const std::string& text) {
  std::vector<std::string> lines;
  for (const auto& e : load(text).errors) lines.push_back(e.to_string());
  return lines;
}

TEST(HeartbeatSchedule, TheIssueExampleLoads) {
  auto loaded = load(monitor("    schedule: \"0 3 * * *\"\n    tz: Europe/Berlin\n    grace: 30m\n"));
  ASSERT_TRUE(loaded.config) << loaded.errors.front().to_string();
  const auto& spec = std::get<HeartbeatSpec>(loaded.config->monitors[0].spec);
  ASSERT_TRUE(spec.schedule.has_value());
  EXPECT_EQ(spec.schedule->text, "0 3 * * *");
  EXPECT_EQ(spec.schedule->zone_name, "Europe/Berlin");
  EXPECT_EQ(spec.period, Millis(0));
  EXPECT_EQ(spec.grace, Millis(30 * 60'000));
  // 03:00 in Berlin in January is 02:00 UTC.
  EXPECT_EQ(spec.schedule->next_after(*parse_rfc3339("2024-01-10T12:00:00Z")),
            parse_rfc3339("2024-01-11T02:00:00Z"));
}

TEST(HeartbeatSchedule, ZoneDefaultsToUtcAndGraceToAnHour) {
  auto loaded = load(monitor("    schedule: \"@daily\"\n"));
  ASSERT_TRUE(loaded.config) << loaded.errors.front().to_string();
  const auto& spec = std::get<HeartbeatSpec>(loaded.config->monitors[0].spec);
  EXPECT_EQ(spec.schedule->zone_name, "UTC");
  EXPECT_EQ(spec.grace, Millis(3'600'000));
  EXPECT_EQ(spec.schedule->next_after(*parse_rfc3339("2024-01-10T12:00:00Z")),
            parse_rfc3339("2024-01-11T00:00:00Z"));
}

TEST(HeartbeatSchedule, ANeverFiringScheduleIsRefusedWhereItIsWritten) {
  EXPECT_EQ(errors_of(monitor("    schedule: \"0 0 30 2 *\"\n")),
            std::vector<std::string>{
                "tw.yaml:4:15: monitors[0].schedule: found '0 0 30 2 *', which never fires (day of month 30 "
                "never occurs in FEB); expected a schedule with at least one date that exists"});
}

TEST(HeartbeatSchedule, FieldErrorsSayWhatWasExpected) {
  EXPECT_EQ(errors_of(monitor("    schedule: \"0 0 32 * *\"\n")),
            std::vector<std::string>{
                "tw.yaml:4:15: monitors[0].schedule: found '0 0 32 * *': day of month 32 is out of range; "
                "expected 1-31"});
  EXPECT_EQ(
      errors_of(monitor("    schedule: 0 9 * * MOX\n")),
      std::vector<std::string>{
          "tw.yaml:4:15: monitors[0].schedule: found '0 9 * * MOX': day of week 'MOX' is not a number or "
          "a name; expected 0-7 or SUN-SAT"});
  EXPECT_EQ(errors_of(monitor("    schedule: \"0 3 * *\"\n")),
            std::vector<std::string>{
                "tw.yaml:4:15: monitors[0].schedule: found '0 3 * *': has 4 fields; expected 5: minute hour "
                "day-of-month month day-of-week, such as '0 3 * * *'"});
}

TEST(HeartbeatSchedule, AnUnknownZoneIsRefused) {
  EXPECT_EQ(
      errors_of(monitor("    schedule: \"0 3 * * *\"\n    tz: Europe/Berln\n")),
      std::vector<std::string>{"tw.yaml:5:9: monitors[0].tz: found 'Europe/Berln'; expected a time zone "
                               "of the tz database, such as Europe/Berlin, America/New_York or UTC"});
}

TEST(HeartbeatSchedule, ExactlyOneOfScheduleAndPeriod) {
  EXPECT_EQ(
      errors_of(monitor("    period: 1h\n    schedule: \"0 3 * * *\"\n")),
      std::vector<std::string>{
          "tw.yaml:5:15: monitors[0].schedule: found both schedule and period; expected exactly one of them"});
  EXPECT_EQ(errors_of(monitor("    grace: 1h\n")),
            std::vector<std::string>{"tw.yaml:2:5: monitors[0].period: missing; expected the time between "
                                     "pings, such as 60m, or a cron schedule, such as \"0 3 * * *\""});
  EXPECT_EQ(
      errors_of(monitor("    period: 1h\n    tz: UTC\n")),
      std::vector<std::string>{"tw.yaml:5:9: monitors[0].tz: is used only with schedule; expected a cron "
                               "schedule beside it, or no tz"});
}

TEST(HeartbeatSchedule, AChangedScheduleOrZoneIsAChangedCheck) {
  auto a = load(monitor("    schedule: \"0 3 * * *\"\n    tz: Europe/Berlin\n"));
  auto b = load(monitor("    schedule: \"0 3 * * *\"\n    tz: America/New_York\n"));
  auto c = load(monitor("    schedule: \"0 4 * * *\"\n    tz: Europe/Berlin\n"));
  ASSERT_TRUE(a.config && b.config && c.config);
  EXPECT_TRUE(same_check(a.config->monitors[0], a.config->monitors[0]));
  EXPECT_FALSE(same_check(a.config->monitors[0], b.config->monitors[0]));
  EXPECT_FALSE(same_check(a.config->monitors[0], c.config->monitors[0]));
}

}  // namespace
}  // namespace trainwatch
