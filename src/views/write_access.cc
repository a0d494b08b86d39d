#include "views/write_access.h"

#include <algorithm>
#include <string>

#include "auth/admin_token_check.h"
#include "auth/request_auth.h"
#include "views/browser_request.h"

namespace trainwatch::views {

namespace {

// `Authorization: Bearer <token>`, through the guess throttle.
bool bearer_allowed(const auth::AdminAuth& auth, const http::Request& request, std::string_view token,
                    const http::Responder& respond) {
  using http::Response;
  const auth::GateResult result =
      auth::check_admin_token(auth, auth::CredentialKind::kBearer, token, request.remote_address);
  switch (result.verdict) {
    case auth::GateVerdict::kAccepted: return true;
    case auth::GateVerdict::kThrottled:
      // Not looked at, right or wrong: this source used up its own attempts.
      respond(too_many_attempts(result.retry_after, "too many wrong tokens from this address"));
      return false;
    case auth::GateVerdict::kRefused: {
      // 401 as RFC 6750 has it for a token that is not (or no longer) valid: a revoked
      // token reads the same as one that never was.
      Response r = Response::problem(401, "that is not an admin token");
      r.headers.emplace_back("WWW-Authenticate", "Bearer error=\"invalid_token\"");
      respond(std::move(r));
      return false;
    }
  }
  return false;
}

}  // namespace

bool write_allowed(auth::AdminAuth& auth, const http::Request& request, const http::Responder& respond) {
  using http::Response;
  constexpr std::string_view kBearer = "Bearer ";
  const std::string_view authorization = request.header("authorization");
  if (authorization.rfind(kBearer, 0) == 0)
    return bearer_allowed(auth, request, authorization.substr(kBearer.size()), respond);
  // A cookie rides along with whatever the browser sends, from whichever page.
  if (auto refusal = cross_origin_refusal(request)) {
    respond(std::move(*refusal));
    return false;
  }
  switch (auth::check_write(auth, session_id_of(request), request.header("x-csrf-token"))) {
    case auth::WriteAccess::kAllowed: return true;
    case auth::WriteAccess::kNoCredentials: {
      Response r = Response::problem(401, "this needs an admin token: Authorization: Bearer <token>");
      r.headers.emplace_back("WWW-Authenticate", "Bearer");
      respond(std::move(r));
      return false;
    }
    case auth::WriteAccess::kBadCsrf:
      respond(Response::problem(403, "the CSRF token is missing or wrong for this session"));
      return false;
  }
  return false;
}

http::Response too_many_attempts(Millis wait, std::string_view what) {
  // Whole seconds, rounded up: a client that waits Retry-After finds its attempt back.
  const auto seconds = std::max<int64_t>(1, (wait.count() + 999) / 1000);
  http::Response r =
      http::Response::problem(429, std::string(what) + "; try again in " + std::to_string(seconds) + " s");
  r.headers.emplace_back("Retry-After", std::to_string(seconds));
  return r;
}

int status_for(const Error& error) {
  auto ends_with = [&](std::string_view suffix) {
    return error.code.size() > suffix.size() &&
           error.code.compare(error.code.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with(".invalid")) return 400;
  if (ends_with(".not_found")) return 404;
  if (ends_with(".exists") || ends_with(".read_only") || ends_with(".in_use") || ends_with(".full"))
    return 409;
  return 503;
}

}  // namespace trainwatch::views
