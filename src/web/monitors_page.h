// The dashboard's home, GET /: every monitor (down ones first) with its state and a 24 h
// latency sparkline, filtered by state, type and tag. Bounds: at most kMaxListRows rows
// ("showing N of M" beyond); the table, per filter and audience, shows every change of
// state applied before the request and is at most kMonitorRowsMaxAge older than it
// (http/fresh_cache.h); the page around it is rendered per visitor.
#pragma once

#include "http/server.h"
#include "web/web_context.h"

namespace trainwatch::web {

void add_monitors_page(http::Router& router, const WebContext& context);

}  // namespace trainwatch::web
