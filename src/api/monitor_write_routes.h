// The write side of /api/v1/monitors: POST (create), PUT /{name} (replace), DELETE /{name},
// POST /{name}/pause and /{name}/resume. Each needs write access (auth/request_auth.h):
// 401 without credentials, 403 for a wrong token or CSRF token. Changes answer only after
// they are committed to the store.
#pragma once

#include <memory>

#include "api/monitor_catalog.h"
#include "api/write_access.h"
#include "auth/admin_auth.h"
#include "engine/engine.h"
#include "http/server.h"

namespace trainwatch::api {

struct WriteContext {
  Engine& engine;
  MonitorCatalog& catalog;
  auth::AdminAuth& auth;
};

void add_monitor_write_routes(http::Router& router, const WriteContext& context);

}  // namespace trainwatch::api
