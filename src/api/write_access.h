// The write API's access check and error statuses, shared by every route that changes
// something (monitors, maintenance windows).
#pragma once

#include "auth/admin_auth.h"
#include "core/result.h"
#include "http/server.h"

namespace trainwatch::api {

// Answers the request (and returns false) unless it may write (auth/request_auth.h): 401
// without credentials, 403 for a wrong token or CSRF token.
bool write_allowed(auth::AdminAuth& auth, const http::Request& request, const http::Responder& respond);

// HTTP status for a catalog error code, by its last part: 400 invalid, 404 not_found,
// 409 exists, read_only or full, 503 otherwise (the store).
int status_for(const Error& error);

}  // namespace trainwatch::api
