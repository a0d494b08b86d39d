// The write API's access check and error statuses, shared by every route that changes
// something (monitors, maintenance windows, notification channels, test sends).
#pragma once

#include <string_view>

#include "auth/admin_auth.h"
#include "auth/request_auth.h"
#include "core/clock.h"
#include "core/result.h"
#include "http/server.h"

namespace trainwatch::views {

// Answers the request (and returns false) unless it may write (auth/request_auth.h): 401
// without credentials or with a wrong or revoked bearer token (counted against the
// client's address), 403 for a wrong CSRF token, and 429 with Retry-After, without
// looking at the token, while the address is out of attempts (AdminAuth::kFailureLimits).
bool write_allowed(auth::AdminAuth& auth, const http::Request& request, const http::Responder& respond);

// The one gate of every notification channel write (create, edit, remove, test send),
// from the API and the dashboard alike: channels hold credentials and reach people, so
// they are an admin's. Today every credential that may write is an admin's, and this
// answers what auth::check_write answers; a role check belongs here and nowhere else.
auth::WriteAccess channel_write_access(auth::AdminAuth& auth, std::string_view authorization,
                                       std::string_view cookie, std::string_view csrf);
// write_allowed() through channel_write_access(): the same answers.
bool channel_write_allowed(auth::AdminAuth& auth, const http::Request& request,
                           const http::Responder& respond);

// 429 problem+json with Retry-After in whole seconds (rounded up): "<what>; try again in N s".
http::Response too_many_attempts(Millis wait, std::string_view what);

// HTTP status for a catalog error code, by its last part: 400 invalid, 404 not_found,
// 409 exists, read_only or full, 503 otherwise (the store).
int status_for(const Error& error);
// problem+json for `error` at status_for(error), with "field": the input key it is about
// (when not empty), so a form can point at it.
http::Response problem_for(const Error& error, std::string_view field = "");

}  // namespace trainwatch::views
