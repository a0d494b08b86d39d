// A monitor's report over whole UTC days, for the person who has to say how a service
// did (an SLA review, a manager, a customer): its availability measured against an SLO
// target with the error budget left, and its outages: how many, the downtime, the mean
// time to recovery and the longest. Per day too, for a spreadsheet (report_csv).
//
//   availability  = uptime_percent of the daily rollups in the range: what the status
//                   page and the badges show for those days, counted the same way;
//   downtime      = incident time inside the range (an open incident up to now);
//   error budget  = (100 - slo) % of the range's time watched, up to now; left = budget -
//                   downtime. Watched from its first check (views::first_watched_ms): a
//                   monitor added on the 20th has a budget from then, as its availability
//                   counts only its own checks (else a monitor down since it was added a
//                   minute ago would show 0 % availability, SLO missed, and most of a
//                   month's budget left).
//
// Worked example: 2026-11-01 to 2026-12-01 (30 days), slo 99.9, one incident of 30 min
// on the 12th: budget 43 min 12 s, downtime 30 min, left 13 min 12 s (30.6 %); MTTR and
// longest 30 min. Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "core/model.h"
#include "storage/store.h"
#include "views/audience.h"

namespace trainwatch::views {

struct ReportRange {
  int64_t from_ms = 0;  // a UTC midnight, inclusive
  int64_t to_ms = 0;    // a later UTC midnight, exclusive
};

struct ReportDay {
  int64_t day_ms = 0;
  int64_t checks = 0;
  int64_t ok = 0;
  int64_t downtime_ms = 0;
  int incidents = 0;  // that started that day

  // ok / checks in percent, as uptime_percent counts it; nullopt: not one check that day.
  std::optional<double> availability() const {
    if (checks == 0) return std::nullopt;
    return 100.0 * static_cast<double>(ok) / static_cast<double>(checks);
  }
};

struct MonitorReport {
  std::string monitor;
  ReportRange range;
  double slo_percent = 99.9;
  int64_t elapsed_ms = 0;                      // of the range, up to now
  int64_t watched_from_ms = 0;                 // the budget counts from here (above)
  std::optional<double> availability_percent;  // nullopt: not one check in the range
  int64_t downtime_ms = 0;
  int64_t budget_ms = 0;            // the downtime the SLO allows from watched_from_ms
  std::vector<Incident> incidents;  // those overlapping the range, oldest first
  std::optional<int64_t> mttr_ms;   // the mean duration of those that ended
  int64_t longest_ms = 0;           // the longest of them (an open one up to now)
  std::vector<ReportDay> days;      // every day of the range up to now, oldest first
};

// `day_buckets`: the monitor's daily uptime buckets (views::uptime_buckets); `incidents`
// in any order (those outside the range are left out); `first_watched_ms`: its first
// check (views::first_watched_ms), none if never.
struct ReportReads {
  std::span<const UptimeBucket> day_buckets;
  std::span<const Incident> incidents;
  std::optional<int64_t> first_watched_ms;
};
MonitorReport build_report(std::string monitor, ReportRange range, double slo_percent,
                           const ReportReads& reads, int64_t now_ms);

// The report as the API answers it; incident causes as `audience` may read them.
boost::json::object report_json(const MonitorReport& report, Audience audience);

// What a report says about a range in figures, whether of one monitor or a status page:
// written once (report_figures_json) so both say it alike.
struct ReportFigures {
  double slo_percent = 99.9;
  std::optional<double> availability_percent;
  int64_t downtime_ms = 0;
  int64_t budget_ms = 0;
  int64_t budget_used_ms = 0;  // a monitor's downtime; a page's mean downtime per monitor
  size_t incident_count = 0;
  std::optional<int64_t> mttr_ms;
  int64_t longest_ms = 0;
};
ReportFigures figures_of(const MonitorReport& report);

// {slo_percent, availability_percent, slo_met, downtime_s, error_budget, incident_count,
// mttr_s, longest_outage_s}: a report's figures without its lists, as both reports and a
// monitor's row in a status page's report (views/page_report.h) write them.
boost::json::object report_figures_json(const ReportFigures& figures);

// {allowed_s, used_s, left_s, left_percent}: the error budget as both reports write it.
boost::json::object error_budget_json(int64_t allowed_ms, int64_t used_ms);

// Seconds with three decimals: exact for a person and a spreadsheet alike.
boost::json::value report_seconds(int64_t ms);

// One row per day: date,checks,ok,availability_percent,downtime_s,incidents (a header
// first). No cause text: nothing in it depends on who asks.
std::string report_csv(const MonitorReport& report);

}  // namespace trainwatch::views
