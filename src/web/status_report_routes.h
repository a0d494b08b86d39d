// A status page's availability report (views/page_report.h), for the page's audience: the
// public, whoever asks (an admin sees what the public sees, as on the page itself).
//   GET /api/v1/status/{slug}/report   JSON, or with ?format=csv one CSV row per monitor
//   GET /status/{slug}/report          a page that prints well, linked from the status page
// Both take ?from&to&slo as a monitor's report does (views/report_request.h). A built
// report is cached for kStatusReportMaxAge by page, range and SLO: the status page is
// public, so a burst of readers (or one asking for range after range) costs one build at
// a time, on the cache's thread, never an HTTP thread's.
#pragma once

#include "http/server.h"
#include "web/web_context.h"

namespace trainwatch::web {

void add_status_report_routes(http::Router& router, const WebContext& context);

}  // namespace trainwatch::web
