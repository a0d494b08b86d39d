// What a delivery attempt, or a decision taken without one, writes into its outbox row.
// Pure: the time, the retry policy and the backoff's jitter come in as arguments; the
// dispatcher stores the row afterwards.
#pragma once

#include <string>

#include "alerting/retry_policy.h"
#include "alerting/sender.h"
#include "core/clock.h"
#include "storage/store.h"

namespace trainwatch::alerting {

// What became of a delivery after one attempt.
enum class AttemptEnd {
  kDelivered,  // accepted by the provider: done
  kRejected,   // refused for good (4xx other than 408/429, SMTP 5xx): failed, not retried
  kRetry,      // failed for now: still pending, tried again at next_attempt
  kGaveUp,     // failed for now, but the next try would fall past give_up_after: failed
};

// Marks the row as tried now. Stored before the answer comes, so an attempt cut short by
// a restart still counts.
void begin_attempt(Delivery& row, SystemTime now);

// Writes the attempt's outcome into the row (status, http_status, last_error,
// next_attempt, finished). A Retry-After on a 429 or 503 is honoured over the backoff
// (retry_policy.h); `random_unit` in [0, 1] is the backoff's jitter.
AttemptEnd settle_attempt(Delivery& row, const SendOutcome& outcome, const RetryPolicy& policy,
                          SystemTime now, double random_unit);

// Ends the row without (another) attempt: cancelled by flap damping, or failed because it
// cannot be sent at all. `reason` becomes its last_error.
void close_row(Delivery& row, DeliveryStatus status, std::string reason, SystemTime now);

}  // namespace trainwatch::alerting
