#include "views/browser_request.h"

#include "auth/cookie_names.h"
#include "auth/form.h"
#include "auth/request_origin.h"

namespace trainwatch::views {

bool over_https(const http::Request& request) { return request.header("x-forwarded-proto") == "https"; }

std::string session_id_of(const http::Request& request) {
  return auth::cookie_value(request.header("cookie"), auth::session_cookie_name(over_https(request)));
}

std::optional<http::Response> cross_origin_refusal(const http::Request& request) {
  auto why = auth::cross_origin_refusal({request.header("origin"), request.header("sec-fetch-site"),
                                         request.header("host"), over_https(request)});
  if (!why) return std::nullopt;
  return http::Response::problem(403, *why);
}

}  // namespace trainwatch::views
