// The write side of /api/v1/monitors: POST (create), PUT /{name} (replace), DELETE /{name},
// POST /{name}/pause and /{name}/resume. Each needs write access (auth/request_auth.h):
// 401 without credentials, 403 for a wrong token or CSRF token. Changes answer only after
// they are committed to the store.
#pragma once

#include <memory>

#include "api/monitor_catalog.h"
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

// HTTP status for a catalog error code: 400 invalid, 404 not found, 409 exists or
// read-only, 503 otherwise.
int status_for(const Error& error);

}  // namespace trainwatch::api
