// The write API's access check and error statuses, shared by every route that changes
// something (monitors, maintenance windows, test sends).
#pragma once

#include <string_view>

#include "auth/admin_auth.h"
#include "core/clock.h"
#include "core/result.h"
#include "http/server.h"

namespace trainwatch::views {

// Answers the request (and returns false) unless it may write (auth/request_auth.h): 401
// without credentials or with a wrong or revoked bearer token (counted against the
// client's address), 403 for a wrong CSRF token, and 429 with Retry-After, without
// looking at the token, while the address is out of attempts (AdminAuth::kFailureLimits).
bool write_allowed(auth::AdminAuth& auth, const http::Request& request, const http::Responder& respond);

// 429 problem+json with Retry-After in whole seconds (rounded up): "<what>; try again in N s".
http::Response too_many_attempts(Millis wait, std::string_view what);

// HTTP status for a catalog error code, by its last part: 400 invalid, 404 not_found,
// 409 exists, read_only or full, 503 otherwise (the store).
int status_for(const Error& error);

}  // namespace trainwatch::views
