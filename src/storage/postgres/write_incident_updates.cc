// Updates posted about incidents: see write_ops.h.
#include "storage/postgres/write_ops.h"
#include "storage/store_errors.h"

namespace trainwatch::postgres {

Status run_op(Tx& tx, const AddIncidentUpdate& op) {
  const IncidentUpdate& u = op.update;
  // Locking the incident's row makes servers that share this database post to one
  // incident one at a time, so the count below holds the bound for all of them.
  if (tx.exec_params("SELECT id FROM incidents WHERE id = $1 FOR UPDATE", u.incident_id).empty()) {
    return make_error(store_error::kNotFound, "no incident " + std::to_string(u.incident_id));
  }
  const auto count =
      tx.exec_params1("SELECT COUNT(*) FROM incident_updates WHERE incident_id = $1", u.incident_id)[0]
          .as<int64_t>();
  if (count >= kMaxUpdatesPerIncident) {
    return make_error(store_error::kFull, "incident " + std::to_string(u.incident_id) + " already has " +
                                              std::to_string(kMaxUpdatesPerIncident) +
                                              " updates, the most it takes");
  }
  tx.exec_params("INSERT INTO incident_updates (incident_id, at_ms, status, text) VALUES ($1, $2, $3, $4)",
                 u.incident_id, ms(u.at), std::string(to_string(u.status)), u.text);
  return Ok{};
}

}  // namespace trainwatch::postgres
