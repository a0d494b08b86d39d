// The write side of /api/v1/monitors: POST (create), PUT /{name} (replace), DELETE /{name},
// POST /{name}/pause and /{name}/resume. Each needs write access (auth/request_auth.h):
// 401 without credentials or with a wrong token, 403 for a wrong CSRF token, 429 while the
// address is out of attempts. Changes answer only after they are committed to the store;
// the answer to a heartbeat monitor's create or replace carries its `ping_url`.
#pragma once

#include <memory>

#include "auth/admin_auth.h"
#include "catalog/monitor_catalog.h"
#include "engine/engine.h"
#include "http/server.h"
#include "views/write_access.h"

namespace trainwatch::api {

struct WriteContext {
  engine::Engine& engine;
  catalog::MonitorCatalog& catalog;
  auth::AdminAuth& auth;
};

void add_monitor_write_routes(http::Router& router, const WriteContext& context);

}  // namespace trainwatch::api
