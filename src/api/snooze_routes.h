// /api/v1/monitors/{name}/snooze: a monitor's alerts held for a while, everything else
// unchanged (catalog/monitor_snooze.h).
//   GET     {"monitor", "snoozed": bool, "until": RFC 3339 | null}
//   POST    {"for": "1h"} (1m to 7d): snoozes it from now, replacing its current snooze;
//           200 with what GET then answers
//   DELETE  ends its snooze (204, snoozed or not): the alerts it held go out at once
// 404 for an unknown monitor. Writes need write access as the monitor API does
// (views/write_access.h), are audited, and answer once committed to the store.
#pragma once

#include "auth/admin_auth.h"
#include "catalog/maintenance_catalog.h"
#include "catalog/monitor_snooze.h"
#include "core/clock.h"
#include "engine/engine.h"
#include "http/server.h"

namespace trainwatch::api {

struct SnoozeContext {
  catalog::MonitorSnoozes& snoozes;
  const catalog::MaintenanceCatalog& windows;
  engine::Engine& engine;
  auth::AdminAuth& auth;
  const Clock& clock;
};

void add_snooze_routes(http::Router& router, const SnoozeContext& context);

}  // namespace trainwatch::api
