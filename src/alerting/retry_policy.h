// When to try a delivery again, and when to stop. Pure: times and randomness come in as
// arguments, so tests drive it with a manual clock and fixed "random" numbers.
//
// Backoff: attempt n (1-based) waits base = initial_delay * 2^(n-1), plus jitter picked
// uniformly in [0, base/2] so that many deliveries failing together do not retry
// together, capped at max_delay. With the defaults: 1–1.5 s, 2–3 s, 4–6 s, ... then 1 h
// each time; never less than 1 s, never more than 1 h.
//
// Worked example (random = 0): attempts fail at t=0, 1 s, 3 s, 7 s: the next try is
// at 15 s. A 429 with "Retry-After: 120" makes the next try t+120 s instead (capped at
// max_delay). Once the next try would fall after first_attempt + give_up_after (24 h),
// the delivery is given up: marked failed with its last error, logged and counted.
#pragma once

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "core/clock.h"

namespace trainwatch::alerting {

// How long a timer waits from `now` until a try due at `at`; zero once that has passed.
inline Millis delay_until(SystemTime at, SystemTime now) {
  return std::max(Millis(0), std::chrono::duration_cast<Millis>(at - now));
}

struct RetryPolicy {
  Millis initial_delay{1'000};
  Millis max_delay{3'600'000};
  Millis give_up_after{24 * 3'600'000};

  // `random_unit` in [0, 1]. `attempt` >= 1.
  Millis backoff(int attempt, double random_unit) const;
};

// What one attempt's outcome means for the delivery.
enum class AttemptVerdict {
  kDelivered,  // 2xx (or SMTP accepted)
  kRetry,      // network error, timeout, 5xx, 408, 429, unreadable response
  kPermanent,  // 4xx other than 408/429, bad credentials: retrying cannot help
};

// `transport_ok` false: no HTTP answer (connect, timeout, TLS...). `permanent_transport`:
// a transport error that retrying cannot fix (SMTP login denied, recipient refused).
AttemptVerdict judge_attempt(bool transport_ok, bool permanent_transport, int http_status);

struct RetryDecision {
  bool give_up = false;
  SystemTime next_attempt{};
};

// After a retryable failure: when to try again, or give up. `retry_after` is a parsed
// Retry-After (429/503), honoured over the backoff but capped at max_delay.
RetryDecision decide_retry(const RetryPolicy& policy, int attempts, SystemTime first_attempt, SystemTime now,
                           std::optional<Millis> retry_after, double random_unit);

// Retry-After as delay-seconds ("120") or an HTTP-date ("Wed, 21 Oct 2015 07:28:00 GMT").
// nullopt when malformed; a date in the past is 0.
std::optional<Millis> parse_retry_after(std::string_view value, SystemTime now);

}  // namespace trainwatch::alerting
