// One monitor's dashboard page, GET /monitors/{name}: its state, uptime over 24 h to
// 90 days, the last 50 results and 20 incidents, and for a heartbeat the last ping's age
// against period and grace and the ping log. Secrets (the ping URL, an API monitor's
// JSON with its target's credentials) are shown to admins only (core/redaction.h).
#pragma once

#include "http/server.h"
#include "web/web_context.h"

namespace trainwatch::web {

void add_monitor_page(http::Router& router, const WebContext& context);

}  // namespace trainwatch::web
