#include "alerting/retry_policy.h"

#include <algorithm>
#include <charconv>
#include <ctime>
#include <string>

namespace trainwatch::alerting {

Millis RetryPolicy::backoff(int attempt, double random_unit) const {
  // Doubling stops once past max_delay: no overflow however many attempts.
  Millis base = initial_delay;
  for (int i = 1; i < attempt && base < max_delay; ++i) base *= 2;
  const double unit = std::clamp(random_unit, 0.0, 1.0);
  const Millis jitter(static_cast<int64_t>(static_cast<double>(base.count()) / 2 * unit));
  return std::min(base + jitter, max_delay);
}

AttemptVerdict judge_attempt(bool transport_ok, bool permanent_transport, int http_status) {
  if (!transport_ok) return permanent_transport ? AttemptVerdict::kPermanent : AttemptVerdict::kRetry;
  if (http_status >= 200 && http_status < 300) return AttemptVerdict::kDelivered;
  if (http_status == 408 || http_status == 429) return AttemptVerdict::kRetry;
  if (http_status >= 400 && http_status < 500) return AttemptVerdict::kPermanent;
  return AttemptVerdict::kRetry;  // 5xx, and 1xx/3xx that should not reach us
}

RetryDecision decide_retry(const RetryPolicy& policy, int attempts, SystemTime first_attempt, SystemTime now,
                           std::optional<Millis> retry_after, double random_unit) {
  Millis wait =
      retry_after ? std::min(*retry_after, policy.max_delay) : policy.backoff(attempts, random_unit);
  RetryDecision d;
  d.next_attempt = now + wait;
  d.give_up = d.next_attempt > first_attempt + policy.give_up_after;
  return d;
}

std::optional<Millis> parse_retry_after(std::string_view value, SystemTime now) {
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  if (value.empty()) return std::nullopt;
  if (value.front() >= '0' && value.front() <= '9') {
    int64_t seconds = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
    if (ec != std::errc() || end != value.data() + value.size()) return std::nullopt;
    // Anything over a day is capped by the policy anyway; cap here to avoid overflow.
    return Millis(std::min<int64_t>(seconds, 86'400) * 1000);
  }
  std::tm tm{};
  const std::string copy(value);
  const char* end = strptime(copy.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (end == nullptr || *end != '\0') return std::nullopt;
  const SystemTime at = std::chrono::system_clock::from_time_t(timegm(&tm));
  return at > now ? std::chrono::duration_cast<Millis>(at - now) : Millis(0);
}

}  // namespace trainwatch::alerting
