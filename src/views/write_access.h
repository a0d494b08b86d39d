// The write API's access check and error statuses, shared by every route that changes
// something (monitors, maintenance windows, notification channels, test sends).
#pragma once

#include <optional>
#include <string_view>

#include "auth/admin_auth.h"
#include "auth/request_auth.h"
#include "core/clock.h"
#include "core/result.h"
#include "http/server.h"

namespace trainwatch::views {

// Who may make this write, when they hold at least `needed`; otherwise answers the
// request and returns nullopt: 401 without credentials or with a wrong, expired or
// revoked bearer token (counted by the guess throttle, auth/guess_throttle.h), 429 with
// Retry-After, without looking at the token, while the client's own source is out of
// attempts; for a session cookie, 403 when the browser says the request comes from
// another origin (auth/request_origin.h) or the CSRF token is missing or wrong
// (auth/request_auth.h); and 403 for a role below `needed`, naming the role it needs. An
// allowed write is reported to the audit log (AdminAuth::audit) as "METHOD /path".
std::optional<auth::Principal> write_allowed(auth::AdminAuth& auth, const http::Request& request,
                                             const http::Responder& respond, auth::Role needed);

// As write_allowed, for a write that stores nothing of its own (a test send): sets
// `answer` to the responder to answer it with, which holds the answer until the audit row
// is committed (or refused: the write goes on, as above), so that no answer comes before
// the record of who asked. Every other write is queued after its audit row and answers
// once committed, so its row is committed by then too.
std::optional<auth::Principal> write_allowed_recorded(auth::AdminAuth& auth, const http::Request& request,
                                                      const http::Responder& respond, auth::Role needed,
                                                      http::Responder& answer);

// A responder that holds its answer until `recorded` has run (write_allowed_recorded).
struct HeldAnswer {
  http::Responder answer;
  auth::AdminAuth::Recorded recorded;
};
HeldAnswer hold_until_recorded(const http::Responder& respond);

// Who reads, when they hold at least `needed` (a bearer token through the throttle, or a
// live session; no CSRF token, since a read changes nothing); otherwise answers 401, 403
// or 429 as above and returns nullopt. Reads are not audited.
std::optional<auth::Principal> read_allowed(const auth::AdminAuth& auth, const http::Request& request,
                                            const http::Responder& respond, auth::Role needed);

// 403 problem+json for a principal whose role is below `needed`.
http::Response role_refused(const auth::Principal& who, auth::Role needed);

// 429 problem+json with Retry-After in whole seconds (rounded up): "<what>; try again in N s".
http::Response too_many_attempts(Millis wait, std::string_view what);

// HTTP status for a catalog error code, by its last part: 400 invalid, 403 forbidden,
// 404 not_found, 409 exists, read_only, in_use or full, 503 otherwise (the store).
int status_for(const Error& error);
// problem+json for `error` at status_for(error), with "field": the input key it is about
// (when not empty), so a form can point at it.
http::Response problem_for(const Error& error, std::string_view field = "");

}  // namespace trainwatch::views
