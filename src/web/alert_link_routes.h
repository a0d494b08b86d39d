// The page an alert's snooze link opens (auth/alert_link.h, catalog/alert_links.h):
//   GET  /snooze/{link}   says which monitor and offers lengths: it does nothing, so a
//                         mail scanner or chat preview that fetches the link snoozes nothing
//   POST /snooze/{link}   for=15m|1h|4h|1d: spends the link, snoozes the monitor, writes the
//                         audit log ("alert link of incident #412"), and says until when
// No login: holding the alert is the credential, and it can do only this. A changed or
// unknown link, or one whose monitor was deleted, is 404; an expired or used one 410:
// each a page that says so and points to the monitor's page.
#pragma once

#include "http/server.h"
#include "web/web_context.h"

namespace trainwatch::web {

void add_alert_link_routes(http::Router& router, const WebContext& context);

}  // namespace trainwatch::web
