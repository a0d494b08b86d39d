// GET /api/v1/monitors/{name}/report: a monitor's availability report over whole UTC days
// (views/monitor_report.h), as JSON or, with ?format=csv, one CSV row per day. Its
// parameters and bounds: views/report_request.h.
#pragma once

#include "api/routes.h"
#include "http/server.h"

namespace trainwatch::api {

void get_monitor_report(const ApiContext& ctx, const http::Request& request, const http::Responder& respond);

}  // namespace trainwatch::api
