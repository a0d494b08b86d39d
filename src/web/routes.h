// The pages' HTTP surface: public status pages (/status/{slug}, /api/v1/status/{slug}),
// badges, static assets, the login page and the dashboard. Reads come from the engine's
// in-memory view and the store's read side; nothing here waits on the store's writer.
//
// Access: status pages, badges and static files are public. The dashboard reads like the
// GET API (public on the listen address); logging in with an admin token is what allows
// changes. Every form carries a CSRF token and every POST checks it.
//
// One file per group of routes: status_page_routes, badge_routes, static_routes,
// login_routes, monitors_page, monitor_page, monitor_forms and job_page; add_web_routes
// adds them all. (maintenance_page, notifications_page and the people pages,
// web/people_pages.h, take contexts of their own.)
#pragma once

#include "http/server.h"
#include "web/web_context.h"

namespace trainwatch::web {

void add_web_routes(http::Router& router, const WebContext& context);

}  // namespace trainwatch::web
