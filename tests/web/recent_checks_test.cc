#include "web/recent_checks.h"

#include <gtest/gtest.h>

#include "web/monitor_events.h"
#include "web/monitor_series.h"

namespace trainwatch::web {
namespace {

using std::chrono::seconds;

const SystemTime kNow = from_unix_ms(1'800'000'000'000);

CheckResult result(int ago_s, bool ok, double ms = 10, std::string cause = "") {
  CheckResult r;
  r.at = kNow - seconds(ago_s);
  r.ok = ok;
  r.latency_ms = ms;
  r.cause = ok ? "" : (cause.empty() ? "HTTP 503" : cause);
  return r;
}

size_t count(const std::string& html, const std::string& what) {
  size_t n = 0;
  for (size_t at = html.find(what); at != std::string::npos; at = html.find(what, at + 1)) ++n;
  return n;
}

// The row: 3 failed of the last 10 checks are 3 red beats and 7 green.
TEST(RecentChecks, ABarHasABeatPerCheckColouredByResult) {
  std::vector<CheckResult> newest_first;
  for (int i = 0; i < 10; ++i) newest_first.push_back(result(i, i != 1 && i != 4 && i != 5));
  const auto beats = beats_from_results(newest_first, 30);
  ASSERT_EQ(beats.size(), 10u);
  EXPECT_EQ(beats.front().at_ms, to_unix_ms(kNow - seconds(9)));  // oldest first
  const std::string html = beats_html(beats, 30);
  EXPECT_EQ(count(html, "b-bad"), 3u);
  EXPECT_EQ(count(html, "b-ok"), 7u);
  EXPECT_EQ(count(html, "b-none"), 20u);
  EXPECT_NE(html.find("last 10: 7 ok, 3 failed"), std::string::npos);
  EXPECT_EQ(beats_from_results(newest_first, 4).size(), 4u);
}

TEST(RecentChecks, AHeartbeatsBeatsArePingsAndMissedDeadlines) {
  std::vector<PingRecord> pings(3);
  pings[0].ping.at = kNow;
  pings[1].ping = Ping{PingKind::kExitCode, 3, kNow - seconds(60), "", "", "", false};
  pings[2].ping = Ping{PingKind::kLog, 0, kNow - seconds(90), "", "", "", false};
  // The exit code's own verdict, and a deadline missed two minutes ago.
  const std::vector<CheckResult> results = {result(60, false), result(120, false, 0, "no ping for 2 min")};
  const auto beats = beats_from_pings(pings, results, 30);
  ASSERT_EQ(beats.size(), 3u);
  EXPECT_EQ(beats[0].kind, BeatKind::kFailed);  // the missed deadline
  EXPECT_EQ(beats[1].kind, BeatKind::kFailed);  // exit code 3
  EXPECT_EQ(beats[2].kind, BeatKind::kOk);
}

TEST(RecentChecks, TheSparklineStartsAtTheFirstCheck) {
  const auto one = sparkline(beats_from_results(std::vector<CheckResult>{result(0, true, 23)}, 30));
  EXPECT_FALSE(one.path.empty());
  EXPECT_EQ(one.label, "latency of the last 1 check: 23 ms");
  const auto none = sparkline(beats_from_results(std::vector<CheckResult>{result(0, false)}, 30));
  EXPECT_TRUE(none.path.empty());
  EXPECT_EQ(latency_text(0.42), "0.4 ms");
  EXPECT_EQ(latency_text(1234), "1.2 s");
}

TEST(MonitorEvents, IncidentsAndFailuresBelowRetriesBecomeEventsNotRows) {
  Incident i;
  i.id = 4;
  i.started = kNow - seconds(300);
  i.ended = kNow - seconds(60);
  i.cause = "HTTP 503";
  // Newest first: ok, two failures outside the incident, then failures inside it.
  const std::vector<CheckResult> results = {result(10, true), result(20, false, 0, "timeout"),
                                            result(30, false, 0, "timeout"), result(100, false),
                                            result(200, false)};
  const auto events = monitor_events(std::vector<Incident>{i}, results, kNow, 50);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].kind, "failed");
  EXPECT_EQ(events[0].checks, 2);
  EXPECT_EQ(events[0].text, "timeout");
  EXPECT_EQ(events[1].kind, "up");
  EXPECT_EQ(events[1].text, "Up again after 4 min");
  EXPECT_EQ(events[2].kind, "down");
  EXPECT_EQ(events[2].incident_id, 4);
}

TEST(MonitorEvents, AJobsSameVerdictInARowIsOneLine) {
  const std::vector<CheckResult> results = {result(1, false, 0, "rank 3 stalled"),
                                            result(2, false, 0, "rank 3 stalled"), result(3, true),
                                            result(4, true), result(5, true)};
  const auto runs = verdict_runs(results, 20);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].cause, "rank 3 stalled");
  EXPECT_EQ(runs[0].checks, 2);
  EXPECT_EQ(runs[1].checks, 3);
  EXPECT_EQ(runs[1].from, kNow - seconds(5));
}

TEST(MonitorSeries, ResultsAreAveragedIntoBucketsWithTheirFailures) {
  const int64_t from = to_unix_ms(kNow - seconds(60));
  const auto points = bucket_results(std::vector<CheckResult>{result(50, true, 10), result(45, true, 30),
                                                              result(44, false), result(5, true, 7)},
                                     from, 30'000);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(*points[0].mean_ms, 20);
  EXPECT_EQ(points[0].failed, 1);
  EXPECT_EQ(*points[1].mean_ms, 7);
  EXPECT_FALSE(chart_range("2w"));
  EXPECT_EQ(chart_range("7d")->width_ms, 7 * 86'400'000LL);
}

}  // namespace
}  // namespace trainwatch::web
