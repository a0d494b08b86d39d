// Judges one HTTP response against its monitor's expectations: status, keywords and
// conditions. Pure: no I/O, so every rule is unit-tested directly.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "config/config.h"

namespace trainwatch::checks {

struct HttpVerdict {
  bool ok = true;
  // "HTTP 503; [BODY].status == degraded, expected ok", with each value taken from the
  // body marked (core/redaction.h): read it through cause_for.
  std::string cause;
};

// The cause of a reply that does not begin with an HTTP status line, in either client.
inline constexpr std::string_view kNotHttp = "invalid response: not an HTTP response";

// A response body past this fails the check with kBodyTooLarge and is not kept, in either client.
inline constexpr size_t kMaxHttpBodyBytes = 1024 * 1024;
inline constexpr std::string_view kBodyTooLarge = "body over 1 MiB";

// Without a condition on [STATUS], a status from 200 to 399 is success.
// `certificate_ms_left`: what [CERTIFICATE_EXPIRATION] reads; nullopt without TLS.
HttpVerdict judge_http_response(const HttpCheckSpec& spec, int status, std::string_view body,
                                double latency_ms, std::optional<double> certificate_ms_left = std::nullopt);

}  // namespace trainwatch::checks
