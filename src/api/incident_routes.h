// One incident and its updates: GET /api/v1/incidents/{id} answers the incident (as the
// list shows it) with "updates", oldest first; POST /api/v1/incidents/{id}/updates adds
// one ({"status", "text"}, views/incident_views.h) to an open or closed incident and
// answers 201 once it is committed. Posting needs write access exactly as the monitor
// API does (views/write_access.h): 400 for a bad body, 404 for an unknown incident, 409
// once the incident holds kMaxUpdatesPerIncident updates, 503 when the store refuses.
#pragma once

#include "auth/admin_auth.h"
#include "core/clock.h"
#include "http/server.h"
#include "storage/store.h"

namespace trainwatch::api {

struct IncidentContext {
  Store& store;
  auth::AdminAuth& auth;
  const Clock& clock;
};

void add_incident_routes(http::Router& router, const IncidentContext& context);

}  // namespace trainwatch::api
