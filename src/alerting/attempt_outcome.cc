#include "alerting/attempt_outcome.h"

#include "core/duration.h"

namespace trainwatch::alerting {

void begin_attempt(Delivery& row, SystemTime now) {
  if (!row.first_attempt) row.first_attempt = now;
  ++row.attempts;
  row.last_attempt = now;
  row.next_attempt.reset();
}

void close_row(Delivery& row, DeliveryStatus status, std::string reason, SystemTime now) {
  row.status = status;
  row.last_error = std::move(reason);
  row.finished = now;
  row.next_attempt.reset();
}

AttemptEnd settle_attempt(Delivery& row, const SendOutcome& o, const RetryPolicy& policy, SystemTime now,
                          double random_unit) {
  row.http_status = o.status;
  switch (judge_attempt(o.transport_ok, o.permanent, o.status)) {
    case AttemptVerdict::kDelivered:
      close_row(row, DeliveryStatus::kDelivered, "", now);
      return AttemptEnd::kDelivered;
    case AttemptVerdict::kPermanent:
      close_row(row, DeliveryStatus::kFailed, o.error, now);
      return AttemptEnd::kRejected;
    case AttemptVerdict::kRetry: break;
  }
  // Retry-After only means "come back then" on the statuses that define it.
  std::optional<Millis> retry_after;
  if (o.retry_after && (o.status == 429 || o.status == 503))
    retry_after = parse_retry_after(*o.retry_after, now);
  const RetryDecision d =
      decide_retry(policy, row.attempts, row.first_attempt.value_or(now), now, retry_after, random_unit);
  if (d.give_up) {
    close_row(row, DeliveryStatus::kFailed,
              "gave up after " + format_duration(policy.give_up_after) + " and " +
                  std::to_string(row.attempts) + " attempts: " + o.error,
              now);
    return AttemptEnd::kGaveUp;
  }
  row.last_error = o.error;
  row.next_attempt = d.next_attempt;
  return AttemptEnd::kRetry;
}

}  // namespace trainwatch::alerting
