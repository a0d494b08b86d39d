#include "auth/credential_gate.h"

#include <spdlog/spdlog.h>

#include <string>

#include "auth/client_source.h"

namespace trainwatch::auth {

CredentialGate::CredentialGate(const Clock& clock, GuessLimits limits) : clock_(clock), throttle_(limits) {}

GateResult CredentialGate::attempt(CredentialKind kind, std::string_view remote_address,
                                   std::string_view credential_key, const std::function<bool()>& check) {
  const std::string source = client_source(remote_address);
  // Agents' guesses are remembered apart from people's (see CredentialKind).
  const std::string throttled_as = kind == CredentialKind::kAgent ? "agent " + source : source;
  const auto k = static_cast<size_t>(kind);
  if (auto wait = throttle_.begin(throttled_as, clock_.monotonic_time())) {
    throttled_[k].fetch_add(1, std::memory_order_relaxed);
    log_refusal(kind, source, true);
    return {GateVerdict::kThrottled, *wait};
  }
  if (check()) {
    throttle_.succeeded(throttled_as, clock_.monotonic_time());
    return {GateVerdict::kAccepted, {}};
  }
  throttle_.failed(throttled_as, credential_key, clock_.monotonic_time());
  failures_[k].fetch_add(1, std::memory_order_relaxed);
  log_refusal(kind, source, false);
  return {GateVerdict::kRefused, {}};
}

void CredentialGate::log_refusal(CredentialKind kind, std::string_view source, bool throttled) {
  if (auto events = log_.admit(clock_.monotonic_time())) {
    spdlog::warn(
        "auth: {} wrong or throttled credential(s) since the last such line; the latest: {} {} from {}",
        *events, throttled ? "a throttled" : "a wrong", kCredentialKindNames[static_cast<size_t>(kind)],
        source);
  }
}

void CredentialGate::write_metrics(PrometheusWriter& w) const {
  w.family("trainwatch_auth_failures_total", "counter",
           "Wrong credentials checked, by where they were presented.");
  for (size_t k = 0; k < kCredentialKindNames.size(); ++k) {
    w.sample("trainwatch_auth_failures_total", {{"kind", kCredentialKindNames[k]}},
             static_cast<double>(failures_[k].load(std::memory_order_relaxed)));
  }
  w.family("trainwatch_auth_throttled_total", "counter",
           "Credentials answered 429 (or the public view) unchecked: their source was out of attempts.");
  for (size_t k = 0; k < kCredentialKindNames.size(); ++k) {
    w.sample("trainwatch_auth_throttled_total", {{"kind", kCredentialKindNames[k]}},
             static_cast<double>(throttled_[k].load(std::memory_order_relaxed)));
  }
  const GuessThrottle::Stats stats = throttle_.stats();
  w.family("trainwatch_auth_throttle_entries", "gauge",
           "Sources and credentials whose wrong guesses are remembered.");
  w.sample("trainwatch_auth_throttle_entries", {{"table", "source"}}, static_cast<double>(stats.sources));
  w.sample("trainwatch_auth_throttle_entries", {{"table", "credential"}},
           static_cast<double>(stats.credentials));
  w.family("trainwatch_auth_throttle_forgotten_total", "counter",
           "Entries evicted at the table's bound before their allowance refilled.");
  w.sample("trainwatch_auth_throttle_forgotten_total", {{"table", "source"}},
           static_cast<double>(stats.sources_forgotten));
  w.sample("trainwatch_auth_throttle_forgotten_total", {{"table", "credential"}},
           static_cast<double>(stats.credentials_forgotten));
}

}  // namespace trainwatch::auth
