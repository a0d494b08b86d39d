// The dashboard's monitor forms: POST /monitors (create), /monitors/{name}/edit,
// /pause, /resume and /delete. Each needs a session and the form's CSRF token
// (dashboard_common.h: form_allowed) and answers with a redirect once the change is
// committed. Creates and edits go through the monitor catalog as the API's JSON, so the
// dashboard and the API accept exactly the same monitors. POST /incidents/{id}/updates
// posts an update to an incident's timeline, checked as the API checks it.
#pragma once

#include "http/server.h"
#include "web/web_context.h"

namespace trainwatch::web {

void add_monitor_forms(http::Router& router, const WebContext& context);

}  // namespace trainwatch::web
