// CredentialGate: the one door every credential check of the server passes through. The
// guess throttle (auth/guess_throttle.h) decides whether the check may run at all; what
// each attempt cost is counted for /metrics and logged, at most one line every 10 s
// (the line says how many attempts it stands for), so a flood of wrong tokens costs a
// few log lines, not one per request. Nothing secret is logged: the kind, the count and
// the source, never what was presented.
//
// Threading: every call is safe from any thread.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string_view>

#include "auth/guess_throttle.h"
#include "core/clock.h"
#include "core/log_throttle.h"
#include "core/prometheus.h"

namespace trainwatch::auth {

// Where a credential was presented; the label of the metrics.
// An agent's report token is throttled in a realm of its own: an agent left running with a
// stale jobs.token on the server's own host waits alone, and never locks that address out
// of the API and the login page (a person there sends its tokens and passwords in the
// other realm).
enum class CredentialKind { kBearer, kLogin, kAgent };
inline constexpr std::array<std::string_view, 3> kCredentialKindNames = {"bearer", "login", "agent"};

enum class GateVerdict { kAccepted, kRefused, kThrottled };

struct GateResult {
  GateVerdict verdict = GateVerdict::kRefused;
  Millis retry_after{};  // kThrottled: how long the source must wait (at least 1 ms)
};

class CredentialGate {
 public:
  static constexpr std::chrono::seconds kLogEvery{10};

  explicit CredentialGate(const Clock& clock, GuessLimits limits = {});

  // Runs `check` (true: the credential is right) unless the source of `remote_address`
  // (auth/client_source.h) is out of attempts; `credential_key` names what is guessed
  // at (a user name, a prefix of a token's digest).
  GateResult attempt(CredentialKind kind, std::string_view remote_address, std::string_view credential_key,
                     const std::function<bool()>& check);

  // trainwatch_auth_failures_total{kind}, trainwatch_auth_throttled_total{kind}, and the
  // throttle's tables: trainwatch_auth_throttle_entries{table} and _forgotten_total{table}.
  void write_metrics(PrometheusWriter& w) const;

 private:
  void log_refusal(CredentialKind kind, std::string_view source, bool throttled);

  const Clock& clock_;
  GuessThrottle throttle_;
  std::array<std::atomic<uint64_t>, kCredentialKindNames.size()> failures_{};
  std::array<std::atomic<uint64_t>, kCredentialKindNames.size()> throttled_{};
  LogThrottle log_{kLogEvery};
};

}  // namespace trainwatch::auth
