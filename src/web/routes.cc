#include "web/routes.h"

#include "web/alert_link_routes.h"
#include "web/badge_routes.h"
#include "web/job_page.h"
#include "web/login_routes.h"
#include "web/monitor_forms.h"
#include "web/monitor_page.h"
#include "web/monitors_page.h"
#include "web/report_page.h"
#include "web/static_routes.h"
#include "web/status_page_routes.h"
#include "web/status_report_routes.h"

namespace trainwatch::web {

// The router answers with the first route that matches, so the groups keep the order their
// routes have always been added in.
void add_web_routes(http::Router& router, const WebContext& ctx) {
  add_status_page_routes(router, ctx);
  add_status_report_routes(router, ctx);
  add_alert_link_routes(router, ctx);
  add_badge_routes(router, ctx);
  add_static_routes(router);
  add_login_routes(router, ctx);
  add_monitors_page(router, ctx);
  add_job_pages(router, ctx);
  add_monitor_page(router, ctx);
  add_report_page(router, ctx);
  add_monitor_forms(router, ctx);
}

}  // namespace trainwatch::web
