// The write API's access check and error statuses, shared by every route that changes
// something (monitors, maintenance windows, test sends).
#pragma once

#include <string_view>

#include "auth/admin_auth.h"
#include "core/clock.h"
#include "core/result.h"
#include "http/server.h"

namespace trainwatch::views {

// Answers the request (and returns false) unless it may write: 401 without credentials or
// with a wrong or revoked bearer token (counted by the guess throttle,
// auth/guess_throttle.h), 429 with Retry-After, without looking at the token, while the
// client's own source is out of attempts; for a session cookie, 403 when the browser says
// the request comes from another origin (auth/request_origin.h) or the CSRF token is
// missing or wrong (auth/request_auth.h).
bool write_allowed(auth::AdminAuth& auth, const http::Request& request, const http::Responder& respond);

// 429 problem+json with Retry-After in whole seconds (rounded up): "<what>; try again in N s".
http::Response too_many_attempts(Millis wait, std::string_view what);

// HTTP status for a catalog error code, by its last part: 400 invalid, 404 not_found,
// 409 exists, read_only or full, 503 otherwise (the store).
int status_for(const Error& error);

}  // namespace trainwatch::views
