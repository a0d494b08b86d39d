// Public badges: GET /badge/{monitor}/status.svg (the monitor's state) and
// /badge/{monitor}/uptime-30d.svg (30 days of daily rollups, one store read), each
// cacheable by the client for a minute.
#pragma once

#include "http/server.h"
#include "web/web_context.h"

namespace trainwatch::web {

void add_badge_routes(http::Router& router, const WebContext& context);

}  // namespace trainwatch::web
