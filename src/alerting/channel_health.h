// ChannelHealth: what the API, the dashboard and /metrics show of one channel, and the
// accounting that keeps it. Plain values; the dispatcher updates them under its mutex
// and hands out copies.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "alerting/attempt_outcome.h"
#include "core/clock.h"

namespace trainwatch::alerting {

// Results counted in trainwatch_notifications_total{channel,result}.
struct DeliveryCounters {
  uint64_t delivered = 0;  // accepted by the provider
  uint64_t error = 0;      // an attempt failed and will be retried
  uint64_t rejected = 0;   // failed for good: the provider refused it (4xx) or it cannot be sent
  uint64_t gave_up = 0;    // retried for give_up_after (24 h) without success
  uint64_t cancelled = 0;  // a DOWN and its recovery both held (notify_after, maintenance)

  void add(AttemptEnd end);
};

struct ChannelHealth {
  std::string name;
  std::string type;
  std::string target;  // without secrets
  bool is_default = false;
  size_t queued = 0;              // released, waiting or in flight
  size_t held = 0;                // waiting for notify_after or a maintenance window
  bool backlog_in_store = false;  // more pending rows than the dispatcher keeps loaded
  bool in_flight = false;
  int consecutive_failures = 0;
  std::optional<SystemTime> last_success;
  std::optional<SystemTime> last_failure;
  std::string last_error;
  std::optional<SystemTime> next_attempt;
  DeliveryCounters counters;

  // Notes how an attempt ended, `error` being what the sender said. Returns the
  // consecutive failures before it, for the log lines when a channel starts failing and
  // when it works again.
  int note_attempt(AttemptEnd end, const std::optional<SystemTime>& next_try, const std::string& error,
                   SystemTime now);
};

// A test send says what the channel does now, as a delivery would: a success is its last
// delivery (health "ok", and no longer failing when nothing waits to be retried); a failure
// its last error (health "failing"). Counted as a delivery or an error.
void note_test(ChannelHealth& health, bool ok, const std::string& error, SystemTime now);

}  // namespace trainwatch::alerting
