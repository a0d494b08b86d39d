// The alert outbox: see reads.h.
#include <algorithm>

#include "storage/postgres/reads.h"

namespace trainwatch::postgres {
namespace {

Delivery delivery_from_row(const pqxx::row& row) {
  Delivery d;
  d.id = row[0].as<int64_t>();
  d.spec.channel = row[1].as<std::string>();
  d.spec.monitor = row[2].as<std::string>();
  if (!row[3].is_null()) d.spec.incident_id = row[3].as<int64_t>();
  d.spec.kind = row[4].as<std::string>();
  d.spec.event = row[5].as<std::string>();
  d.spec.created = from_unix_ms(row[6].as<int64_t>());
  d.spec.due = from_unix_ms(row[7].as<int64_t>());
  // An unknown status (a newer trainwatch wrote it) reads as failed: never re-sent.
  d.status = delivery_status_from_string(row[8].as<std::string>()).value_or(DeliveryStatus::kFailed);
  d.attempts = row[9].as<int>();
  d.first_attempt = optional_time(row[10]);
  d.last_attempt = optional_time(row[11]);
  d.next_attempt = optional_time(row[12]);
  d.last_error = row[13].as<std::string>();
  d.http_status = row[14].as<int>();
  d.finished = optional_time(row[15]);
  return d;
}

}  // namespace

Result<std::vector<Delivery>> read_deliveries(Tx& tx, const DeliveryQuery& query) {
  std::optional<std::string> status;
  if (query.status) status = std::string(to_string(*query.status));
  const char* order = query.after_id ? " ORDER BY id ASC LIMIT $6" : " ORDER BY id DESC LIMIT $6";
  std::vector<Delivery> out;
  for (
      const pqxx::row& row : tx.exec_params(
          std::string(
              "SELECT id, channel, monitor, incident_id, kind, event, created_ms, due_ms, status, attempts, "
              "first_attempt_ms, last_attempt_ms, next_attempt_ms, last_error, http_status, finished_ms "
              "FROM deliveries WHERE ($1::text IS NULL OR status = $1) AND ($2::text IS NULL OR channel = $2) "
              "AND ($3::text IS NULL OR monitor = $3) AND ($4::bigint IS NULL OR id > $4) "
              "AND ($5::bigint IS NULL OR id < $5)") +
              order,
          status, query.channel, query.monitor, query.after_id, query.before_id,
          std::clamp(query.limit, 0, kMaxRowsPerRead))) {
    out.push_back(delivery_from_row(row));
  }
  return out;
}

Result<std::vector<Delivery>> claim_deliveries(Tx& tx, const DeliveryClaim& claim) {
  // SKIP LOCKED: two replicas claiming at once take different rows instead of waiting
  // for each other; what one skipped is taken by its next claim, or by the other.
  // NOT EXISTS: a row waits while an earlier pending row of its incident on this channel
  // is claimed by another replica, so a channel hears an incident's messages in order
  // across replicas too (unclaimed rows are taken together, oldest first, by one claim). Without it, a new
  // owner's recovery went out at once while the DOWN sat claimed by the replica that died, and was sent after
  // it when that claim expired (a PagerDuty incident resolved, then triggered again for good). A row held by
  // a dead replica is taken by this claim; what waited behind it is taken by the next.
  // EXISTS: a claim is made under the claimer's lease, in the same statement. A replica
  // whose own last beat is older than the ttl (paused, cut off) is a dead one to the
  // others, who take its rows; it takes none, so it never sends a row it read then.
  std::vector<Delivery> out;
  for (
      const pqxx::row& row : tx.exec_params(
          "UPDATE deliveries SET claimed_by = $1 WHERE id IN ("
          "SELECT d.id FROM deliveries d WHERE d.status = 'pending' AND d.channel = $2 AND (d.claimed_by IS NULL "
          "OR ($3 AND d.claimed_by = $1) OR (d.claimed_by <> $1 AND d.claimed_by NOT IN "
          "(SELECT id FROM members WHERE seen_at > now() - make_interval(secs => $4)))) "
          "AND NOT EXISTS (SELECT 1 FROM deliveries e WHERE e.status = 'pending' AND e.channel = d.channel "
          "AND e.incident_id = d.incident_id AND e.id < d.id AND e.claimed_by <> $1) "
          "AND EXISTS (SELECT 1 FROM members WHERE id = $1 AND seen_at > now() - make_interval(secs => $4)) "
          "ORDER BY d.id LIMIT $5 FOR UPDATE OF d SKIP LOCKED) "
          "RETURNING id, channel, monitor, incident_id, kind, event, created_ms, due_ms, status, attempts, "
          "first_attempt_ms, last_attempt_ms, next_attempt_ms, last_error, http_status, finished_ms",
          claim.claimer, claim.channel, claim.again, static_cast<double>(claim.claimer_ttl.count()) / 1000.0,
          std::clamp(claim.limit, 0, kMaxRowsPerRead))) {
    out.push_back(delivery_from_row(row));
  }
  // RETURNING keeps no order.
  std::sort(out.begin(), out.end(), [](const Delivery& a, const Delivery& b) { return a.id < b.id; });
  return out;
}

}  // namespace trainwatch::postgres
