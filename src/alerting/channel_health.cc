#include "alerting/channel_health.h"

#include <algorithm>

namespace trainwatch::alerting {

void DeliveryCounters::add(AttemptEnd end) {
  switch (end) {
    case AttemptEnd::kDelivered: ++delivered; return;
    case AttemptEnd::kRejected: ++rejected; return;
    case AttemptEnd::kRetry: ++error; return;
    case AttemptEnd::kGaveUp: ++gave_up; return;
  }
}

int ChannelHealth::note_attempt(AttemptEnd end, const std::optional<SystemTime>& next_try,
                                const std::string& error, SystemTime now) {
  const int before = consecutive_failures;
  in_flight = false;
  if (end == AttemptEnd::kDelivered) {
    last_success = now;
    consecutive_failures = 0;
  } else {
    last_failure = now;
    last_error = error;
    ++consecutive_failures;
  }
  next_attempt = end == AttemptEnd::kRetry ? next_try : std::nullopt;
  counters.add(end);
  return before;
}

void note_test(ChannelHealth& health, bool ok, const std::string& error, SystemTime now) {
  if (ok) {
    ++health.counters.delivered;
    health.last_success = now;
    if (health.queued == 0) health.consecutive_failures = 0;
    return;
  }
  ++health.counters.error;
  health.last_failure = now;
  health.last_error = error.empty() ? "the test message was refused" : error;
  health.consecutive_failures = std::max(health.consecutive_failures, 1);
}

}  // namespace trainwatch::alerting
