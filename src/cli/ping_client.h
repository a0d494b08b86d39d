// Sending one heartbeat ping from the command line (`trainwatch ping`, `trainwatch run`):
// libcurl's easy interface with a bounded connect time, a bounded total time and a few
// retries, so a ping never hangs the script or job around it.
#pragma once

#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/ping.h"
#include "core/result.h"

namespace trainwatch::cli {

struct PingClientOptions {
  int attempts = 3;  // transport errors, 5xx and 429 are retried; other answers are not
  Millis connect_timeout{3000};
  Millis total_timeout{10'000};  // per attempt
  Millis first_backoff{500};     // doubles after each failed attempt
};

// The Healthchecks URL for a kind: "", "/start", "/fail", "/log" or "/{exit_code}" added to
// the path of `base` (before any query, so Uptime Kuma push URLs keep their query).
std::string ping_url(std::string_view base, PingKind kind, int exit_code);

// Bodies over this are cut before sending: the server's request bound.
inline constexpr size_t kMaxPingBodyBytes = 1024 * 1024;

// GET without a body, POST with one. Ok with the HTTP status when it was 2xx; otherwise
// "ping.rejected" (the server answered, e.g. 404 for an unknown token) or
// "ping.unreachable" (no answer after every attempt).
Result<int> send_ping(const std::string& url, const std::string* body, const PingClientOptions& options);

}  // namespace trainwatch::cli
