// The ping endpoints, Healthchecks' shape plus the two aliases users already have in
// their scripts (GET, HEAD or POST):
//   /ping/{token}[/start|/fail|/log|/{0-255}]    200 "OK", 404 unknown token,
//                                                400 bad action, 429 rate limit,
//                                                503 store unavailable
//   /api/heartbeat/{token}                       the seed tutorials' form: a success
//   /api/push/{token}?status=up|down&msg=…       Uptime Kuma's push form; answers its JSON
// A ping is answered only after it is committed (see heartbeat/ingest.h).
#pragma once

#include "heartbeat/ingest.h"
#include "http/server.h"

namespace trainwatch::api {

// `ingest` must outlive the router.
void add_ping_routes(http::Router& router, heartbeat::PingIngest& ingest);

}  // namespace trainwatch::api
