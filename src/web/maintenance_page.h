// The dashboard's /maintenance page: every window (the file's and the API's), which ones
// hold notifications now, a form that creates an API window and a delete button for each
// API one. The form is turned into the API's JSON object, so the page and the API accept
// exactly the same windows (catalog/maintenance_catalog.h).
#pragma once

#include "catalog/maintenance_catalog.h"
#include "http/server.h"
#include "web/web_context.h"

namespace trainwatch::web {

struct MaintenancePageContext {
  WebContext web;
  catalog::MaintenanceCatalog& maintenance;
};

void add_maintenance_page(http::Router& router, const MaintenancePageContext& context);

}  // namespace trainwatch::web
