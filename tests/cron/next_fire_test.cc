// Next fire times in real zones of the system's tz database, across the daylight-saving
// changes of Europe/Berlin (last Sundays of March and October, at 02:00/03:00 local) and
// America/New_York (second Sunday of March, first Sunday of November, at 02:00/01:00).
#include "cron/next_fire.h"

#include <gtest/gtest.h>

#include <cctz/civil_time.h>

#include "core/time_format.h"
#include "cron/zone.h"

namespace trainwatch::cron {
namespace {

cctz::time_zone zone(const char* name) {
  auto z = load_zone(name);
  EXPECT_TRUE(z.ok()) << name;
  return z.ok() ? *z : cctz::utc_time_zone();
}

SystemTime utc(const char* rfc3339) {
  auto t = parse_rfc3339(rfc3339);
  EXPECT_TRUE(t.has_value()) << rfc3339;
  return t.value_or(SystemTime{});
}

// A local wall time that exists exactly once in `z`.
SystemTime local(const cctz::time_zone& z, int y, int mo, int d, int h, int mi) {
  return SystemTime(cctz::convert(cctz::civil_second(y, mo, d, h, mi, 0), z));
}

// The next fire time of `expr` after `after`, as RFC 3339 in UTC ("" when none).
std::string next(const char* expr, const cctz::time_zone& z, SystemTime after) {
  auto e = parse_expression(expr);
  EXPECT_TRUE(e.ok()) << expr;
  if (!e.ok()) return "";
  auto t = next_fire(*e, z, after);
  return t ? format_rfc3339(*t) : "";
}

class NextFireTest : public ::testing::Test {
 protected:
  cctz::time_zone utc_ = cctz::utc_time_zone();
  cctz::time_zone berlin_ = zone("Europe/Berlin");
  cctz::time_zone new_york_ = zone("America/New_York");
};

TEST_F(NextFireTest, StrictlyAfterTheGivenInstant) {
  EXPECT_EQ(next("0 3 * * *", utc_, utc("2024-01-01T00:00:00Z")), "2024-01-01T03:00:00.000Z");
  EXPECT_EQ(next("0 3 * * *", utc_, utc("2024-01-01T03:00:00Z")), "2024-01-02T03:00:00.000Z");
  EXPECT_EQ(next("0 3 * * *", utc_, utc("2024-01-01T02:59:59.999Z")), "2024-01-01T03:00:00.000Z");
  EXPECT_EQ(next("0 3 * * *", utc_, utc("2024-01-01T03:00:00.500Z")), "2024-01-02T03:00:00.000Z");
  EXPECT_EQ(next("* * * * *", utc_, utc("2024-01-01T10:07:30Z")), "2024-01-01T10:08:00.000Z");
}

TEST_F(NextFireTest, StepsRangesAndLists) {
  EXPECT_EQ(next("*/15 * * * *", utc_, utc("2024-01-01T10:07:00Z")), "2024-01-01T10:15:00.000Z");
  EXPECT_EQ(next("*/15 * * * *", utc_, utc("2024-01-01T10:45:00Z")), "2024-01-01T11:00:00.000Z");
  EXPECT_EQ(next("1-30/5 * * * *", utc_, utc("2024-01-01T10:26:00Z")), "2024-01-01T11:01:00.000Z");
  EXPECT_EQ(next("0 8,12,18 * * *", utc_, utc("2024-01-01T12:00:00Z")), "2024-01-01T18:00:00.000Z");
  EXPECT_EQ(next("0 8,12,18 * * *", utc_, utc("2024-01-01T18:00:00Z")), "2024-01-02T08:00:00.000Z");
  EXPECT_EQ(next("30 23 31 12 *", utc_, utc("2024-01-01T00:00:00Z")), "2024-12-31T23:30:00.000Z");
}

TEST_F(NextFireTest, NamesAndSundayAsZeroOrSeven) {
  // 2024-01-01 is a Monday; 2024-01-07 a Sunday.
  EXPECT_EQ(next("0 9 * * MON-FRI", utc_, utc("2024-01-05T10:00:00Z")), "2024-01-08T09:00:00.000Z");
  EXPECT_EQ(next("0 0 * * 7", utc_, utc("2024-01-01T00:00:00Z")), "2024-01-07T00:00:00.000Z");
  EXPECT_EQ(next("0 0 * * 0", utc_, utc("2024-01-01T00:00:00Z")), "2024-01-07T00:00:00.000Z");
  EXPECT_EQ(next("0 0 1 JUL *", utc_, utc("2024-01-01T00:00:00Z")), "2024-07-01T00:00:00.000Z");
  EXPECT_EQ(next("0 0 * jan,jul mon", utc_, utc("2024-01-29T12:00:00Z")), "2024-07-01T00:00:00.000Z");
}

TEST_F(NextFireTest, DayOfMonthOrDayOfWeekWhenBothAreRestricted) {
  // January 2024: Friday the 5th and 12th, then Saturday the 13th.
  EXPECT_EQ(next("0 0 13 * FRI", utc_, utc("2024-01-01T00:00:00Z")), "2024-01-05T00:00:00.000Z");
  EXPECT_EQ(next("0 0 13 * FRI", utc_, utc("2024-01-05T00:00:00Z")), "2024-01-12T00:00:00.000Z");
  EXPECT_EQ(next("0 0 13 * FRI", utc_, utc("2024-01-12T00:00:00Z")), "2024-01-13T00:00:00.000Z");
  // With day of week '*' only the 13th counts; with day of month '*' only Fridays.
  EXPECT_EQ(next("0 0 13 * *", utc_, utc("2024-01-01T00:00:00Z")), "2024-01-13T00:00:00.000Z");
  EXPECT_EQ(next("0 0 * * FRI", utc_, utc("2024-01-06T00:00:00Z")), "2024-01-12T00:00:00.000Z");
  // '*/2' counts as unrestricted: odd days that are Mondays (the 1st, 15th, 29th).
  EXPECT_EQ(next("0 0 */2 * MON", utc_, utc("2024-01-01T00:00:00Z")), "2024-01-15T00:00:00.000Z");
}

TEST_F(NextFireTest, LeapDayWaitsForALeapYearAndSkipsTwentyOneHundred) {
  EXPECT_EQ(next("0 0 29 2 *", utc_, utc("2023-03-01T00:00:00Z")), "2024-02-29T00:00:00.000Z");
  EXPECT_EQ(next("0 0 29 2 *", utc_, utc("2024-02-29T00:00:00Z")), "2028-02-29T00:00:00.000Z");
  EXPECT_EQ(next("0 0 29 2 *", utc_, utc("2096-03-01T00:00:00Z")), "2104-02-29T00:00:00.000Z");
}

TEST_F(NextFireTest, NeverFiringExpressionsFindNothing) {
  EXPECT_EQ(next("0 0 30 2 *", utc_, utc("2024-01-01T00:00:00Z")), "");
  EXPECT_EQ(next("0 0 31 4,6,9,11 *", utc_, utc("2024-01-01T00:00:00Z")), "");
}

TEST_F(NextFireTest, LocalTimesInTheZone) {
  EXPECT_EQ(next("0 3 * * *", berlin_, utc("2024-01-10T12:00:00Z")), "2024-01-11T02:00:00.000Z") << "CET";
  EXPECT_EQ(next("0 3 * * *", berlin_, utc("2024-07-10T12:00:00Z")), "2024-07-11T01:00:00.000Z") << "CEST";
  EXPECT_EQ(next("0 3 * * *", new_york_, utc("2024-01-10T12:00:00Z")), "2024-01-11T08:00:00.000Z") << "EST";
  // A day boundary in the zone, not in UTC: 23:30 UTC is already Thursday in Berlin.
  EXPECT_EQ(next("0 0 * * THU", berlin_, utc("2024-01-10T12:00:00Z")), "2024-01-10T23:00:00.000Z");
}

TEST_F(NextFireTest, BerlinSpringForwardFiresASkippedTimeOnceWhenTheClocksJump) {
  // 2024-03-31: 02:00 CET becomes 03:00 CEST (01:00 UTC); 02:30 does not exist.
  const SystemTime saturday_noon = local(berlin_, 2024, 3, 30, 12, 0);
  EXPECT_EQ(next("30 2 * * *", berlin_, saturday_noon), "2024-03-31T01:00:00.000Z") << "03:00 CEST";
  EXPECT_EQ(next("30 2 * * *", berlin_, utc("2024-03-31T01:00:00Z")), "2024-04-01T00:30:00.000Z");
  // Every fire time inside the gap falls onto the same instant: one fire, not four.
  EXPECT_EQ(next("*/15 2 * * *", berlin_, saturday_noon), "2024-03-31T01:00:00.000Z");
  EXPECT_EQ(next("*/15 2 * * *", berlin_, utc("2024-03-31T01:00:00Z")), "2024-04-01T00:00:00.000Z");
  // A time after the gap is unaffected; the hourly job has no 02:00 that night.
  EXPECT_EQ(next("30 3 * * *", berlin_, saturday_noon), "2024-03-31T01:30:00.000Z");
  EXPECT_EQ(next("0 * * * *", berlin_, utc("2024-03-31T00:00:00Z")), "2024-03-31T01:00:00.000Z");
  EXPECT_EQ(next("0 * * * *", berlin_, utc("2024-03-31T01:00:00Z")), "2024-03-31T02:00:00.000Z");
}

TEST_F(NextFireTest, BerlinFallBackFiresARepeatedTimeOnlyAtItsFirstOccurrence) {
  // 2024-10-27: 03:00 CEST becomes 02:00 CET (01:00 UTC); 02:00-02:59 occurs twice.
  const SystemTime saturday_noon = local(berlin_, 2024, 10, 26, 12, 0);
  EXPECT_EQ(next("30 2 * * *", berlin_, saturday_noon), "2024-10-27T00:30:00.000Z") << "02:30 CEST";
  EXPECT_EQ(next("30 2 * * *", berlin_, utc("2024-10-27T00:30:00Z")), "2024-10-28T01:30:00.000Z");
  EXPECT_EQ(next("30 2 * * *", berlin_, utc("2024-10-27T00:45:00Z")), "2024-10-28T01:30:00.000Z");
  // From inside the second 02:00-03:00 (02:10 CET), 02:30 has fired already.
  EXPECT_EQ(next("30 2 * * *", berlin_, utc("2024-10-27T01:10:00Z")), "2024-10-28T01:30:00.000Z");
  // An hourly job fires at 02:00 CEST and next at 03:00 CET, two hours later.
  EXPECT_EQ(next("0 * * * *", berlin_, utc("2024-10-26T23:30:00Z")), "2024-10-27T00:00:00.000Z");
  EXPECT_EQ(next("0 * * * *", berlin_, utc("2024-10-27T00:00:00Z")), "2024-10-27T02:00:00.000Z");
}

TEST_F(NextFireTest, NewYorkSpringForwardAndFallBack) {
  // 2024-03-10: 02:00 EST becomes 03:00 EDT (07:00 UTC).
  EXPECT_EQ(next("30 2 * * *", new_york_, local(new_york_, 2024, 3, 9, 12, 0)), "2024-03-10T07:00:00.000Z");
  EXPECT_EQ(next("30 2 * * *", new_york_, utc("2024-03-10T07:00:00Z")), "2024-03-11T06:30:00.000Z");
  // 2024-11-03: 02:00 EDT becomes 01:00 EST (06:00 UTC); 01:30 occurs twice.
  EXPECT_EQ(next("30 1 * * *", new_york_, local(new_york_, 2024, 11, 2, 12, 0)), "2024-11-03T05:30:00.000Z");
  EXPECT_EQ(next("30 1 * * *", new_york_, utc("2024-11-03T05:30:00Z")), "2024-11-04T06:30:00.000Z");
  EXPECT_EQ(next("30 1 * * *", new_york_, utc("2024-11-03T06:10:00Z")), "2024-11-04T06:30:00.000Z");
}

}  // namespace
}  // namespace trainwatch::cron
