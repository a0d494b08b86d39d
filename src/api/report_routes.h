// GET /api/v1/monitors/{name}/report: a monitor's availability report over whole UTC days
// (views/monitor_report.h), as JSON or, with ?format=csv, one CSV row per day. Its
// parameters and bounds: views/report_request.h; its reads go through `cache`
// (views/monitor_report_cache.h): 503 with Retry-After when one fails or too many wait.
#pragma once

#include "api/routes.h"
#include "http/server.h"
#include "views/monitor_report_cache.h"

namespace trainwatch::api {

void get_monitor_report(const ApiContext& ctx, views::MonitorReportCache& cache, const http::Request& request,
                        const http::Responder& respond);

}  // namespace trainwatch::api
