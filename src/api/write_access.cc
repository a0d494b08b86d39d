#include "api/write_access.h"

#include "auth/request_auth.h"

namespace trainwatch::api {

bool write_allowed(auth::AdminAuth& auth, const http::Request& request, const http::Responder& respond) {
  using http::Response;
  switch (auth::check_write(auth, request.header("authorization"), request.header("cookie"),
                            request.header("x-csrf-token"))) {
    case auth::WriteAccess::kAllowed: return true;
    case auth::WriteAccess::kNoCredentials: {
      Response r = Response::problem(401, "this needs an admin token: Authorization: Bearer <token>");
      r.headers.emplace_back("WWW-Authenticate", "Bearer");
      respond(std::move(r));
      return false;
    }
    case auth::WriteAccess::kBadToken: respond(Response::problem(403, "that is not an admin token")); return false;
    case auth::WriteAccess::kBadCsrf: respond(Response::problem(403, "the CSRF token is missing or wrong for this session")); return false;
  }
  return false;
}

int status_for(const Error& error) {
  auto ends_with = [&](std::string_view suffix) {
    return error.code.size() > suffix.size() && error.code.compare(error.code.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with(".invalid")) return 400;
  if (ends_with(".not_found")) return 404;
  if (ends_with(".exists") || ends_with(".read_only") || ends_with(".full")) return 409;
  return 503;
}

}  // namespace trainwatch::api
