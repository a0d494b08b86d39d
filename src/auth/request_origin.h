// Whether a browser says a request comes from another origin: the rule that refuses
// login CSRF and cross-origin form posts before any cookie or token is looked at.
//
// Cookies are not isolated by port, and SameSite counts every port of a host as the same
// site, so a page on http://host:9999 can plant cookies for http://host:8080 and have the
// browser post a form there with them. What the browser cannot be made to lie about is
// where the request comes from:
// - `Origin`, when present, must be this server's own origin: the scheme (https when
//   served over TLS or behind a proxy that says X-Forwarded-Proto: https, else http) and
//   the Host header, default ports (80, 443) left out on both sides, compared without
//   case. `Origin: null` (an opaque origin: a sandboxed frame, a data: URL) is refused.
// - `Sec-Fetch-Site`, when present, must be `same-origin` or `none` (typed into the
//   address bar, a bookmark); `same-site` is exactly the other-port case.
// Requests without either header (curl, scripts, old browsers) pass: this guards browsers,
// which send them; tokens and CSRF tokens guard the rest.
//
// Pure: no I/O, no clock.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace trainwatch::auth {

struct OriginFacts {
  std::string_view origin;          // the Origin header, "" when absent
  std::string_view sec_fetch_site;  // the Sec-Fetch-Site header, "" when absent
  std::string_view host;            // the Host header
  bool https = false;               // served over TLS, natively or behind a proxy
};

// This server's own origin as the request names it: "http://host:port" (lower case,
// default port left out).
std::string own_origin(std::string_view host, bool https);

// nullopt when the request may proceed; otherwise why it is refused, in words fit for a
// problem+json detail ("the request comes from http://127.0.0.1:9999, not from …").
std::optional<std::string> cross_origin_refusal(const OriginFacts& facts);

}  // namespace trainwatch::auth
