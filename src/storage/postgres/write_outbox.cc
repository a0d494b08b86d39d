// The alert outbox: see write_ops.h.
#include "storage/postgres/write_ops.h"

namespace trainwatch::postgres {

void insert_delivery(Tx& tx, const NewDelivery& d) {
  tx.exec_prepared("insert_delivery", d.channel, d.monitor, d.incident_id, d.kind, d.event, ms(d.created),
                   ms(d.due));
}

Status run_op(Tx& tx, const UpdateDelivery& op) {
  const pqxx::result r = tx.exec_params(
      "UPDATE deliveries SET status = $1, attempts = $2, first_attempt_ms = $3, last_attempt_ms = $4, "
      "next_attempt_ms = $5, last_error = $6, http_status = $7, finished_ms = $8, version = version + 1 "
      "WHERE id = $9",
      std::string(to_string(op.status)), op.attempts, ms(op.first_attempt), ms(op.last_attempt),
      ms(op.next_attempt), op.last_error, op.http_status, ms(op.finished), op.id);
  if (r.affected_rows() == 0) {
    return make_error("store.not_found",
                      "cannot update delivery " + std::to_string(op.id) + ": no such delivery");
  }
  return Ok{};
}

}  // namespace trainwatch::postgres
