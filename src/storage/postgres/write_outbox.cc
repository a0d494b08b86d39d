// The alert outbox: see write_ops.h.
#include "storage/postgres/write_ops.h"
#include "storage/store_errors.h"

namespace trainwatch::postgres {

void insert_delivery(Tx& tx, const NewDelivery& d) {
  tx.exec_prepared("insert_delivery", d.channel, d.monitor, d.incident_id, d.kind, d.event, ms(d.created),
                   ms(d.due));
}

// Once for the installation (store.h): replicas that saw the same outage take turns
// under a lock of the transaction, and the second finds the first's rows.
Status run_op(Tx& tx, const RecordStoreOutage& op) {
  tx.exec_params("SELECT pg_advisory_xact_lock(hashtext($1))", std::string(kStoreAlertName));
  for (const NewDelivery& d : op.outbox) {
    const pqxx::result said = tx.exec_params(
        "SELECT 1 FROM deliveries WHERE monitor = $1 AND channel = $2 AND kind = $3 AND created_ms >= $4 LIMIT 1",
        d.monitor, d.channel, d.kind, ms(op.from));
    if (said.empty()) insert_delivery(tx, d);
  }
  return Ok{};
}

Status run_op(Tx& tx, const UpdateDelivery& op) {
  const pqxx::result r = tx.exec_params(
      "UPDATE deliveries SET status = $1, attempts = $2, first_attempt_ms = $3, last_attempt_ms = $4, "
      "next_attempt_ms = $5, last_error = $6, http_status = $7, finished_ms = $8, version = version + 1 "
      "WHERE id = $9",
      std::string(to_string(op.status)), op.attempts, ms(op.first_attempt), ms(op.last_attempt),
      ms(op.next_attempt), op.last_error, op.http_status, ms(op.finished), op.id);
  if (r.affected_rows() == 0) {
    return make_error(store_error::kNotFound,
                      "cannot update delivery " + std::to_string(op.id) + ": no such delivery");
  }
  return Ok{};
}

}  // namespace trainwatch::postgres
