#include "views/write_access.h"

#include <algorithm>
#include <string>

#include "auth/request_auth.h"

namespace trainwatch::views {

std::optional<auth::Principal> write_allowed(auth::AdminAuth& auth, const http::Request& request,
                                             const http::Responder& respond, auth::Role needed) {
  using http::Response;
  const std::string_view authorization = request.header("authorization");
  const bool presents_token = authorization.rfind("Bearer ", 0) == 0;
  if (presents_token) {
    // An address out of attempts is not answered on its token at all, right or wrong.
    if (auto wait = auth.throttled(request.remote_address)) {
      respond(too_many_attempts(*wait, "too many wrong tokens from this address"));
      return std::nullopt;
    }
  }
  auto check =
      auth::check_write(auth, authorization, request.header("cookie"), request.header("x-csrf-token"));
  switch (check.access) {
    case auth::WriteAccess::kAllowed: {
      if (!auth::allows(check.who->role, needed)) {
        respond(role_refused(*check.who, needed));
        return std::nullopt;
      }
      auth.audit(*check.who, request.method + " " + request.path, request.remote_address);
      return check.who;
    }
    case auth::WriteAccess::kNoCredentials: {
      Response r =
          Response::problem(401, "this needs a token with the " + std::string(auth::role_name(needed)) +
                                     " role or above: Authorization: Bearer <token>");
      r.headers.emplace_back("WWW-Authenticate", "Bearer");
      respond(std::move(r));
      return std::nullopt;
    }
    case auth::WriteAccess::kBadToken: {
      auth.record_failure(request.remote_address);
      // 401 as RFC 6750 has it for a token that is not (or no longer) valid: a revoked
      // token reads the same as one that never was.
      Response r = Response::problem(401, "that token is not valid (wrong, expired or revoked)");
      r.headers.emplace_back("WWW-Authenticate", "Bearer error=\"invalid_token\"");
      respond(std::move(r));
      return std::nullopt;
    }
    case auth::WriteAccess::kBadCsrf:
      respond(Response::problem(403, "the CSRF token is missing or wrong for this session"));
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<auth::Principal> read_allowed(const auth::AdminAuth& auth, const http::Request& request,
                                            const http::Responder& respond, auth::Role needed) {
  const std::string_view authorization = request.header("authorization");
  const bool presents_token = authorization.rfind("Bearer ", 0) == 0;
  if (presents_token) {
    if (auto wait = auth.throttled(request.remote_address)) {
      respond(too_many_attempts(*wait, "too many wrong tokens from this address"));
      return std::nullopt;
    }
  }
  auto who = auth::reader(auth, authorization, request.header("cookie"));
  if (!who) {
    if (presents_token) auth.record_failure(request.remote_address);
    http::Response r = http::Response::problem(
        401, "this needs a token with the " + std::string(auth::role_name(needed)) + " role or above");
    r.headers.emplace_back("WWW-Authenticate", presents_token ? "Bearer error=\"invalid_token\"" : "Bearer");
    respond(std::move(r));
    return std::nullopt;
  }
  if (!auth::allows(who->role, needed)) {
    respond(role_refused(*who, needed));
    return std::nullopt;
  }
  return who;
}

http::Response role_refused(const auth::Principal& who, auth::Role needed) {
  return http::Response::problem(403, "this needs the " + std::string(auth::role_name(needed)) + " role; " +
                                          who.name + " has the " + std::string(auth::role_name(who.role)) +
                                          " role");
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
  if (ends_with(".forbidden")) return 403;
  if (ends_with(".exists") || ends_with(".read_only") || ends_with(".in_use") || ends_with(".full"))
    return 409;
  return 503;
}

}  // namespace trainwatch::views
