// GET /api/v1/monitors/{name}/report: a monitor's availability report over whole UTC days
// (views/monitor_report.h), as JSON or, with ?format=csv, one CSV row per day.
//
//   ?from=2026-11-01&to=2026-12-01   UTC dates, `to` exclusive; default: this month
//   ?slo=99.9                        the target, in percent (default 99.9)
//
// Bounds: at most kMaxReportDays days; the newest kMaxReportIncidents incidents are read
// (older ones lie before any range a report covers in practice; the answer says when
// the read stopped at the bound: `incidents_truncated`).
#pragma once

#include "api/routes.h"
#include "http/server.h"

namespace trainwatch::api {

inline constexpr int kMaxReportDays = 400;
inline constexpr int kMaxReportIncidents = 2000;

void get_monitor_report(const ApiContext& ctx, const http::Request& request, const http::Responder& respond);

}  // namespace trainwatch::api
