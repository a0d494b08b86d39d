// A status page's report as its reader checks it by hand: the header's worked example
// (a mean of the services, not their pooled checks; downtime while any was down), a
// service without a check left out of the mean, and nothing in it the public may not see.
#include "views/page_report.h"

#include <gtest/gtest.h>

#include "core/redaction.h"
#include "core/time_format.h"

namespace trainwatch::views {
namespace {

int64_t at_ms(const char* text) { return to_unix_ms(*parse_rfc3339(text)); }

constexpr int64_t kMinuteMs = 60'000;
const ReportRange kNovember{at_ms("2026-11-01T00:00:00Z"), at_ms("2026-12-01T00:00:00Z")};
const int64_t kNow = at_ms("2026-12-06T00:00:00Z");

Incident page_incident(int64_t id, const char* monitor, const char* started,
                       std::optional<const char*> ended) {
  Incident i;
  i.id = id;
  i.monitor = monitor;
  i.started = *parse_rfc3339(started);
  if (ended) i.ended = *parse_rfc3339(*ended);
  i.cause = "HTTP 503";
  return i;
}

// `per_day` checks each day of November, `failed` of them on the 12th.
MonitorReport monitor_in_november(const char* name, int64_t per_day, int64_t failed,
                                  const std::vector<Incident>& incidents) {
  std::vector<UptimeBucket> days;
  for (int64_t day = kNovember.from_ms; day < kNovember.to_ms; day += 86'400'000) {
    const bool twelfth = day == at_ms("2026-11-12T00:00:00Z");
    days.push_back(UptimeBucket{day, per_day, per_day - (twelfth ? failed : 0), 0});
  }
  return build_report(name, kNovember, 99.9, ReportReads{days, incidents, std::nullopt}, kNow);
}

std::vector<MonitorReport> the_worked_example() {
  return {monitor_in_november("api", 1440, 30,
                              {page_incident(1, "api", "2026-11-12T10:00:00Z", "2026-11-12T10:30:00Z")}),
          monitor_in_november("db", 288, 12,
                              {page_incident(2, "db", "2026-11-12T10:15:00Z", "2026-11-12T11:15:00Z")})};
}

TEST(PageReport, TheWorkedExampleOfItsHeader) {
  const auto r = build_page_report("ml", "ML", kNovember, 99.9, the_worked_example(), kNow);
  ASSERT_TRUE(r.availability_percent);
  const double api = 100.0 * (43'200 - 30) / 43'200, db = 100.0 * (8'640 - 12) / 8'640;
  EXPECT_NEAR(api, 99.930556, 1e-6);
  EXPECT_NEAR(db, 99.861111, 1e-6);
  EXPECT_NEAR(*r.availability_percent, (api + db) / 2, 1e-9) << "a mean of the services";
  EXPECT_NEAR(*r.availability_percent, 99.895833, 1e-6);
  EXPECT_EQ(r.downtime_ms, 75 * kMinuteMs) << "10:00 to 11:15, once, though both were down 10:15-10:30";
  EXPECT_EQ(r.budget_ms, (43 * 60 + 12) * 1000LL);
  EXPECT_EQ(r.budget_used_ms, 45 * kMinuteMs);
  EXPECT_EQ(r.incidents.size(), 2u);
  EXPECT_EQ(r.mttr_ms, 45 * kMinuteMs);
  EXPECT_EQ(r.longest_ms, 60 * kMinuteMs);

  const auto json = page_report_json(r);
  EXPECT_EQ(json.at("status_page").as_string(), "ml");
  EXPECT_EQ(json.at("slo_met").as_bool(), false);
  EXPECT_DOUBLE_EQ(json.at("downtime_s").as_double(), 75 * 60);
  EXPECT_DOUBLE_EQ(json.at("error_budget").at("left_s").as_double(), -(60 + 48));
  const auto& rows = json.at("monitors").as_array();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].at("monitor").as_string(), "db");
  EXPECT_NEAR(rows[1].at("availability_percent").as_double(), db, 1e-9);
  EXPECT_DOUBLE_EQ(rows[1].at("error_budget").at("left_s").as_double(), (43 * 60 + 12) - 60 * 60);
}

TEST(PageReport, TheCsvHasARowPerMonitor) {
  const auto csv =
      page_report_csv(build_page_report("ml", "ML", kNovember, 99.9, the_worked_example(), kNow));
  EXPECT_EQ(csv,
            "monitor,checks,ok,availability_percent,downtime_s,error_budget_left_s,incidents,mttr_s,"
            "longest_outage_s\n"
            "api,43200,43170,99.9306,1800.000,792.000,1,1800.000,1800.000\n"
            "db,8640,8628,99.8611,3600.000,-1008.000,1,3600.000,3600.000\n");
}

TEST(PageReport, AMonitorWithoutACheckIsLeftOutOfTheMean) {
  auto monitors = the_worked_example();
  monitors.push_back(build_report("new", kNovember, 99.9, ReportReads{}, kNow));
  const auto r = build_page_report("ml", "ML", kNovember, 99.9, std::move(monitors), kNow);
  EXPECT_NEAR(*r.availability_percent, 99.895833, 1e-6);
  EXPECT_EQ(r.budget_used_ms, 45 * kMinuteMs);
  EXPECT_TRUE(page_report_csv(r).ends_with("\nnew,0,0,,0.000,2592.000,0,,0.000\n"));

  const auto empty = build_page_report("ml", "ML", kNovember, 99.9, {}, kNow);
  EXPECT_FALSE(empty.availability_percent);
  EXPECT_TRUE(page_report_json(empty).at("slo_met").is_null());
}

// A service added on the 21st has ten days of budget, not thirty: the page's budget is
// the mean of its services' own.
TEST(PageReport, TheBudgetIsTheMeanOfTheServicesOwn) {
  auto monitors = the_worked_example();
  std::vector<UptimeBucket> days;
  for (int64_t day = at_ms("2026-11-21T00:00:00Z"); day < kNovember.to_ms; day += 86'400'000)
    days.push_back(UptimeBucket{day, 1440, 1440, 0});
  monitors.push_back(
      build_report("added", kNovember, 99.9, ReportReads{days, {}, at_ms("2026-11-21T00:00:00Z")}, kNow));
  const auto r = build_page_report("ml", "ML", kNovember, 99.9, std::move(monitors), kNow);
  EXPECT_EQ(r.monitors[2].budget_ms, 864'000) << "0.1 % of 10 days";
  EXPECT_EQ(r.budget_ms, (2'592'000 * 2 + 864'000) / 3);
}

TEST(PageReport, AnOpenIncidentCountsUpToNowAndOverlapsOnce) {
  const ReportRange december{at_ms("2026-12-01T00:00:00Z"), at_ms("2027-01-01T00:00:00Z")};
  const int64_t now = at_ms("2026-12-06T12:00:00Z");
  const std::vector<Incident> api_down{page_incident(1, "api", "2026-12-06T11:00:00Z", std::nullopt)};
  const std::vector<Incident> db_down{page_incident(2, "db", "2026-12-06T10:30:00Z", "2026-12-06T11:30:00Z")};
  std::vector<MonitorReport> monitors{
      build_report("api", december, 99.9, ReportReads{{}, api_down, std::nullopt}, now),
      build_report("db", december, 99.9, ReportReads{{}, db_down, std::nullopt}, now)};
  const auto r = build_page_report("ml", "ML", december, 99.9, std::move(monitors), now);
  EXPECT_EQ(r.elapsed_ms, (5 * 24 + 12) * 3'600'000LL);
  EXPECT_EQ(r.downtime_ms, 90 * kMinuteMs) << "10:30 until now, 12:00";
  EXPECT_EQ(r.mttr_ms, 60 * kMinuteMs) << "of the one that ended";
  EXPECT_EQ(r.longest_ms, 60 * kMinuteMs);
}

TEST(PageReport, ShowsOnlyWhatThePublicMaySee) {
  Incident db_down = page_incident(2, "db", "2026-11-12T10:15:00Z", "2026-11-12T11:15:00Z");
  db_down.cause = "HTTP 503; [BODY].error == " + mark_body_value("token s3cret") + ", expected none";
  db_down.caused_by = "vault";  // not on the page
  Incident api_down = page_incident(1, "api", "2026-11-12T10:20:00Z", "2026-11-12T10:30:00Z");
  api_down.caused_by = "db";  // on the page
  std::vector<MonitorReport> monitors{monitor_in_november("api", 1440, 10, {api_down}),
                                      monitor_in_november("db", 1440, 60, {db_down})};
  const auto json =
      page_report_json(build_page_report("ml", "ML", kNovember, 99.9, std::move(monitors), kNow));
  const std::string text = boost::json::serialize(json);
  EXPECT_EQ(text.find("s3cret"), std::string::npos) << text;
  EXPECT_EQ(text.find("vault"), std::string::npos) << text;
  const auto& incidents = json.at("incidents").as_array();
  ASSERT_EQ(incidents.size(), 2u);
  EXPECT_EQ(incidents[0].at("id").as_int64(), 2) << "oldest first";
  EXPECT_EQ(incidents[0].at("cause").as_string(), "HTTP 503; [BODY].error == (redacted), expected none");
  EXPECT_TRUE(incidents[0].at("caused_by").is_null());
  EXPECT_EQ(incidents[1].at("caused_by").as_string(), "db");
}

TEST(ReportDay, AvailabilityIsOkOverChecksAndNoneWithoutACheck) {
  const ReportDay day{.day_ms = 0, .checks = 1440, .ok = 1350, .downtime_ms = 0, .incidents = 0};
  EXPECT_DOUBLE_EQ(*day.availability(), 93.75);
  EXPECT_FALSE(ReportDay{}.availability());
}

}  // namespace
}  // namespace trainwatch::views
