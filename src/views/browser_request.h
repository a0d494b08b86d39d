// What the auth rules need to know about a browser's request: whether it came over HTTPS,
// which session cookie it carries, and whether the browser says it comes from another
// origin. Shared by the API's write gate and the dashboard's forms and login page.
#pragma once

#include <optional>
#include <string>

#include "http/server.h"

namespace trainwatch::views {

// Over HTTPS: the server itself listens on plain HTTP, so this is a TLS-terminating proxy
// in front that says `X-Forwarded-Proto: https`. It decides the cookies' names
// (auth/cookie_names.h), their Secure flag and the scheme of the server's own origin.
bool over_https(const http::Request& request);

// The session cookie of the request's scheme ("" when absent).
std::string session_id_of(const http::Request& request);

// 403 problem+json naming why, when the browser says the request comes from another
// origin (auth/request_origin.h); nullopt when it may proceed.
std::optional<http::Response> cross_origin_refusal(const http::Request& request);

}  // namespace trainwatch::views
