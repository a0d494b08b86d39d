// A monitor's report as its reader checks it by hand: the header's worked example, a day
// strip that agrees with the incidents, an incident across the range's edge counted only
// inside it, and an open one up to now.
#include "views/monitor_report.h"

#include <gtest/gtest.h>

#include "core/time_format.h"

namespace trainwatch::views {
namespace {

int64_t ms(const char* text) { return to_unix_ms(*parse_rfc3339(text)); }

Incident incident(int64_t id, const char* started, std::optional<const char*> ended) {
  Incident i;
  i.id = id;
  i.monitor = "api";
  i.started = *parse_rfc3339(started);
  if (ended) i.ended = *parse_rfc3339(*ended);
  i.cause = "HTTP 503";
  return i;
}

// A check a minute all month, each up but the 30 minutes of the incident.
std::vector<UptimeBucket> november(int64_t down_minutes_on_the_12th) {
  std::vector<UptimeBucket> days;
  for (int64_t day = ms("2026-11-01T00:00:00Z"); day < ms("2026-12-01T00:00:00Z"); day += 86'400'000) {
    const bool twelfth = day == ms("2026-11-12T00:00:00Z");
    days.push_back(UptimeBucket{day, 1440, 1440 - (twelfth ? down_minutes_on_the_12th : 0), 0});
  }
  return days;
}

TEST(MonitorReport, TheWorkedExampleOfItsHeader) {
  const std::vector<Incident> incidents{incident(1, "2026-11-12T10:00:00Z", "2026-11-12T10:30:00Z")};
  const auto days = november(30);
  const auto r =
      build_report("api", {ms("2026-11-01T00:00:00Z"), ms("2026-12-01T00:00:00Z")}, 99.9,
                   ReportReads{days, incidents, ms("2026-10-02T08:00:00Z")}, ms("2026-12-06T00:00:00Z"));
  EXPECT_EQ(r.elapsed_ms, 30LL * 86'400'000);
  EXPECT_EQ(r.watched_from_ms, ms("2026-11-01T00:00:00Z")) << "checked since before the range";
  EXPECT_EQ(r.budget_ms, (43 * 60 + 12) * 1000LL) << "0.1 % of 30 days";
  EXPECT_EQ(r.downtime_ms, 30 * 60'000LL);
  ASSERT_TRUE(r.availability_percent);
  EXPECT_NEAR(*r.availability_percent, 100.0 * (43'200 - 30) / 43'200, 1e-9);
  EXPECT_EQ(r.mttr_ms, 30 * 60'000LL);
  EXPECT_EQ(r.longest_ms, 30 * 60'000LL);
  ASSERT_EQ(r.days.size(), 30u);
  EXPECT_EQ(r.days[11].downtime_ms, 30 * 60'000LL);
  EXPECT_EQ(r.days[11].incidents, 1);
  EXPECT_EQ(r.days[10].downtime_ms, 0);

  const auto json = report_json(r, Audience::kAdmin);
  EXPECT_DOUBLE_EQ(json.at("error_budget").at("left_s").as_double(), 13 * 60 + 12);
  EXPECT_EQ(json.at("slo_met").as_bool(), true);
  const std::string csv = report_csv(r);
  EXPECT_TRUE(
      csv.starts_with("date,checks,ok,availability_percent,downtime_s,incidents\n2026-11-01,1440,1440,"
                      "100.0000,0.000,0\n"))
      << csv;
  EXPECT_NE(csv.find("\n2026-11-12,1440,1410,97.9167,1800.000,1\n"), std::string::npos) << csv;
}

TEST(MonitorReport, AnIncidentAcrossTheEdgeCountsOnlyInsideAndAnOpenOneUpToNow) {
  const std::vector<Incident> incidents{
      incident(1, "2026-10-31T23:00:00Z", "2026-11-01T01:00:00Z"),  // one hour inside
      incident(2, "2026-11-03T12:00:00Z", std::nullopt),            // open: 12 hours by now
      incident(3, "2026-10-20T00:00:00Z", "2026-10-20T05:00:00Z"),  // before the range
  };
  const int64_t now = ms("2026-11-04T00:00:00Z");
  const auto r = build_report("api", {ms("2026-11-01T00:00:00Z"), ms("2026-12-01T00:00:00Z")}, 99.0,
                              ReportReads{{}, incidents, std::nullopt}, now);
  EXPECT_EQ(r.elapsed_ms, 3LL * 86'400'000) << "the range up to now";
  EXPECT_EQ(r.downtime_ms, 13 * 3'600'000LL);
  EXPECT_EQ(r.incidents.size(), 2u);
  EXPECT_EQ(r.incidents.front().id, 1) << "oldest first";
  EXPECT_EQ(r.mttr_ms, 2 * 3'600'000LL) << "the ended one, whole";
  EXPECT_EQ(r.longest_ms, 12 * 3'600'000LL);
  EXPECT_FALSE(r.availability_percent) << "no check in the range: no figure rather than 100 %";
  ASSERT_EQ(r.days.size(), 4u) << "days up to now, today's included";
  EXPECT_EQ(r.days[0].downtime_ms, 3'600'000);
  EXPECT_EQ(r.days[0].incidents, 0) << "it started the day before";
  EXPECT_EQ(r.days[2].downtime_ms, 12 * 3'600'000LL);
  EXPECT_EQ(r.days[3].downtime_ms, 0);
  const auto json = report_json(r, Audience::kPublic);
  EXPECT_TRUE(json.at("slo_met").is_null());
  EXPECT_LT(json.at("error_budget").at("left_s").as_double(), 0) << "13 h down against a budget of 43 min";
}

// A monitor added a minute ago and down since: 0 % available, SLO missed, and its budget
// spent, not "most of a month's budget left" (the budget counts from its first check, as
// its availability counts only its own checks).
TEST(MonitorReport, TheBudgetCountsFromTheFirstCheck) {
  const ReportRange december{ms("2026-12-01T00:00:00Z"), ms("2027-01-01T00:00:00Z")};
  const int64_t now = ms("2026-12-07T15:35:00Z");
  const std::vector<UptimeBucket> days{{ms("2026-12-07T00:00:00Z"), 2, 0, 0}};
  const std::vector<Incident> incidents{incident(1, "2026-12-07T15:34:05Z", std::nullopt)};
  const auto r =
      build_report("api", december, 99.9, ReportReads{days, incidents, ms("2026-12-07T15:34:00Z")}, now);
  EXPECT_EQ(r.watched_from_ms, ms("2026-12-07T15:34:00Z"));
  EXPECT_EQ(r.budget_ms, 60) << "0.1 % of the minute watched";
  EXPECT_EQ(r.downtime_ms, 55'000);
  const auto json = report_json(r, Audience::kPublic);
  EXPECT_FALSE(json.at("slo_met").as_bool());
  EXPECT_LT(json.at("error_budget").at("left_s").as_double(), 0) << "spent, as the SLO is missed";
  EXPECT_EQ(json.at("watched_from").as_string(), "2026-12-07T15:34:00.000Z");

  // A report of a range before its first check: nothing watched, no budget.
  const ReportRange november{ms("2026-11-01T00:00:00Z"), ms("2026-12-01T00:00:00Z")};
  EXPECT_EQ(
      build_report("api", november, 99.9, ReportReads{{}, {}, ms("2026-12-07T15:34:00Z")}, now).budget_ms, 0);
}

}  // namespace
}  // namespace trainwatch::views
