#include "views/write_access.h"

#include <algorithm>
#include <string>

#include <boost/json.hpp>

#include "core/json_text.h"

namespace trainwatch::views {

namespace {

using Gate = auth::WriteAccess (*)(auth::AdminAuth&, std::string_view, std::string_view, std::string_view);

auth::WriteAccess any_writer(auth::AdminAuth& auth, std::string_view authorization, std::string_view cookie,
                             std::string_view csrf) {
  return auth::check_write(auth, authorization, cookie, csrf);
}

bool allowed_through(Gate gate, auth::AdminAuth& auth, const http::Request& request,
                     const http::Responder& respond) {
  using http::Response;
  const std::string_view authorization = request.header("authorization");
  const bool presents_token = authorization.rfind("Bearer ", 0) == 0;
  if (presents_token) {
    // An address out of attempts is not answered on its token at all, right or wrong.
    if (auto wait = auth.throttled(request.remote_address)) {
      respond(too_many_attempts(*wait, "too many wrong tokens from this address"));
      return false;
    }
  }
  switch (gate(auth, authorization, request.header("cookie"), request.header("x-csrf-token"))) {
    case auth::WriteAccess::kAllowed: return true;
    case auth::WriteAccess::kNoCredentials: {
      Response r = Response::problem(401, "this needs an admin token: Authorization: Bearer <token>");
      r.headers.emplace_back("WWW-Authenticate", "Bearer");
      respond(std::move(r));
      return false;
    }
    case auth::WriteAccess::kBadToken: {
      auth.record_failure(request.remote_address);
      // 401 as RFC 6750 has it for a token that is not (or no longer) valid: a revoked
      // token reads the same as one that never was.
      Response r = Response::problem(401, "that is not an admin token");
      r.headers.emplace_back("WWW-Authenticate", "Bearer error=\"invalid_token\"");
      respond(std::move(r));
      return false;
    }
    case auth::WriteAccess::kBadCsrf:
      respond(Response::problem(403, "the CSRF token is missing or wrong for this session"));
      return false;
  }
  return false;
}

}  // namespace

bool write_allowed(auth::AdminAuth& auth, const http::Request& request, const http::Responder& respond) {
  return allowed_through(any_writer, auth, request, respond);
}

auth::WriteAccess channel_write_access(auth::AdminAuth& auth, std::string_view authorization,
                                       std::string_view cookie, std::string_view csrf) {
  return auth::check_write(auth, authorization, cookie, csrf);
}

bool channel_write_allowed(auth::AdminAuth& auth, const http::Request& request,
                           const http::Responder& respond) {
  return allowed_through(channel_write_access, auth, request, respond);
}

http::Response too_many_attempts(Millis wait, std::string_view what) {
  // Whole seconds, rounded up: a client that waits Retry-After finds its attempt back.
  const auto seconds = std::max<int64_t>(1, (wait.count() + 999) / 1000);
  http::Response r =
      http::Response::problem(429, std::string(what) + "; try again in " + std::to_string(seconds) + " s");
  r.headers.emplace_back("Retry-After", std::to_string(seconds));
  return r;
}

http::Response problem_for(const Error& error, std::string_view field) {
  http::Response r = http::Response::problem(status_for(error), error.message);
  if (field.empty()) return r;
  boost::json::value doc = boost::json::parse(r.body);
  doc.as_object()["field"] = field;
  r.body = json_text(doc);
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
