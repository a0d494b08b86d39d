// /api/v1/maintenance: GET lists every window (the file's and the API's) with whether it
// holds notifications now; POST creates an API window (201); DELETE /{id} removes one
// (204; 404 unknown; 409 for a file's window). Writes need write access exactly as the
// monitor API does (views/write_access.h) and answer once committed to the store.
#pragma once

#include "auth/admin_auth.h"
#include "catalog/maintenance_catalog.h"
#include "core/clock.h"
#include "http/server.h"

namespace trainwatch::api {

struct MaintenanceContext {
  catalog::MaintenanceCatalog& catalog;
  auth::AdminAuth& auth;
  const Clock& clock;
};

void add_maintenance_routes(http::Router& router, const MaintenanceContext& context);

}  // namespace trainwatch::api
