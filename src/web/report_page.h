// GET /monitors/{name}/report: a monitor's availability report (views/monitor_report.h) as
// a page that prints well, for whoever has to hand it on: the figures against the SLO, the
// outages and a row per day, with a form for the range and links to its CSV and JSON.
#pragma once

#include "http/server.h"
#include "web/web_context.h"

namespace trainwatch::web {

void add_report_page(http::Router& router, const WebContext& context);

}  // namespace trainwatch::web
