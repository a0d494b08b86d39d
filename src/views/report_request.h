// What a report is asked for and how it is read, shared by the API (JSON, CSV) and the
// dashboard's printable page, so that both answer the same question the same way.
//
//   ?from=2026-11-01&to=2026-12-01   UTC dates, `to` exclusive; default: this month
//   ?slo=99.9                        the target, in percent (default 99.9)
//
// Bounds: at most kMaxReportDays days; the newest kMaxReportIncidents incidents are read
// (the report says when the read stopped there: `incidents_truncated`).
#pragma once

#include <map>
#include <string>

#include "config/web_config.h"
#include "core/result.h"
#include "engine/engine.h"
#include "storage/store.h"
#include "views/monitor_report.h"
#include "views/page_report.h"

namespace trainwatch::views {

inline constexpr int kMaxReportDays = 400;
inline constexpr int kMaxReportIncidents = 2000;

struct ReportRequest {
  ReportRange range;
  double slo_percent = 99.9;
};

// Errors: "api.bad_param", naming the parameter, what it was and what is expected.
Result<ReportRequest> report_request(const std::map<std::string, std::string>& query, SystemTime now);

struct ReadReport {
  MonitorReport report;
  bool incidents_truncated = false;
};

// The monitor's rollups and incidents for the range, made into its report.
Result<ReadReport> read_report(Store& store, const engine::MonitorView& view, const ReportRequest& request,
                               SystemTime now);

struct ReadPageReport {
  PageReport report;
  bool incidents_truncated = false;  // for any of its monitors
};

// The report of each monitor the page shows (each once, in the page's order; one removed
// by a reload since is left out, as the page leaves it out), made into the page's.
Result<ReadPageReport> read_page_report(Store& store, const engine::Engine& engine,
                                        const StatusPageConfig& page, const ReportRequest& request,
                                        SystemTime now);

}  // namespace trainwatch::views
