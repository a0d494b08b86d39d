// A status page's report over whole UTC days: how the services the page shows did, for
// the people the page is for. Made of its monitors' own reports (views/monitor_report.h),
// so each monitor's row is the figure its own report gives.
//
//   availability  = the mean of the availability of the page's monitors that had a check
//                   in the range: each service counts once, as a manager reading "the page
//                   was 99.9 % available" expects, however often each is checked (pooling
//                   the checks would let a monitor checked every 10 s outweigh one checked
//                   every 5 min);
//   error budget  = the mean of those same monitors' budgets (each over the time it
//                   was watched: views/monitor_report.h); used = their mean downtime, so
//                   that budget and availability tell the same story: the budget runs
//                   out as the mean availability falls to the SLO;
//   downtime      = the time at least one of the page's monitors was down (the union of
//                   their incidents inside the range): how long the page showed an outage;
//   incidents, MTTR, longest: over every incident of the page's monitors.
//
// Worked example (page_report_test checks it): 2026-11-01 to 2026-12-01 (30 days), slo
// 99.9; `api` checked every minute (43,200 checks), 30 failed, down 10:00-10:30 on the
// 12th; `db` every 5 min (8,640 checks), 12 failed, down 10:15-11:15 the same day.
//   availability  (99.930556 + 99.861111) / 2 = 99.895833 % (pooled checks: 99.919 %)
//   downtime      10:00-11:15 = 1 h 15 min
//   error budget  43 min 12 s; used (30 + 60) / 2 = 45 min; left -1 min 48 s: missed
//   incidents 2, MTTR 45 min, longest 1 h.
// Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "core/model.h"
#include "views/monitor_report.h"

namespace trainwatch::views {

struct PageReport {
  std::string slug;
  std::string title;
  ReportRange range;
  double slo_percent = 99.9;
  int64_t elapsed_ms = 0;
  std::vector<MonitorReport> monitors;         // the page's, in its order, each once
  std::optional<double> availability_percent;  // nullopt: no monitor had a check
  int64_t downtime_ms = 0;                     // at least one monitor down
  int64_t budget_ms = 0;                       // the mean budget of the monitors counted
  int64_t budget_used_ms = 0;                  // the mean downtime of the monitors counted
  std::vector<Incident> incidents;             // every monitor's, oldest first
  std::optional<int64_t> mttr_ms;              // the mean duration of those that ended
  int64_t longest_ms = 0;
};

// `monitors`: the reports of the page's monitors over `range` with `slo_percent`, made at
// `now_ms` (build_report).
PageReport build_page_report(std::string slug, std::string title, ReportRange range, double slo_percent,
                             std::vector<MonitorReport> monitors, int64_t now_ms);

// Its figures, as a monitor's report has them (views/monitor_report.h): the budget used
// is the mean downtime of the monitors counted.
ReportFigures figures_of(const PageReport& report);

// The report as the API answers it. Always as the public reads it: a status page is
// public, whoever looks. Incidents name only monitors of the page (a `caused_by` naming
// another is left out).
boost::json::object page_report_json(const PageReport& report);

// One row per monitor (a header first):
// monitor,checks,ok,availability_percent,downtime_s,error_budget_left_s,incidents,mttr_s,longest_outage_s
// availability and MTTR empty where there is none. No cause text.
std::string page_report_csv(const PageReport& report);

}  // namespace trainwatch::views
