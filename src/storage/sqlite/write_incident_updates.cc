// Updates posted about incidents: see write_ops.h.
#include <SQLiteCpp/Database.h>

#include <string>

#include "storage/sqlite/write_ops.h"
#include "storage/store_errors.h"

namespace trainwatch::sqlite {

// The incident's existence and its update count are read inside the transaction, so the
// bound holds however many updates arrive at once: the writer applies them one by one.
Status run_op(PreparedWrites& w, const AddIncidentUpdate& op) {
  const IncidentUpdate& u = op.update;
  SQLite::Statement count(w.db,
                          "SELECT (SELECT COUNT(*) FROM incidents WHERE id = ?1), "
                          "(SELECT COUNT(*) FROM incident_updates WHERE incident_id = ?1)");
  count.bind(1, u.incident_id);
  count.executeStep();
  if (count.getColumn(0).getInt64() == 0) {
    return make_error(store_error::kNotFound, "no incident " + std::to_string(u.incident_id));
  }
  if (count.getColumn(1).getInt64() >= kMaxUpdatesPerIncident) {
    return make_error(store_error::kFull, "incident " + std::to_string(u.incident_id) + " already has " +
                                              std::to_string(kMaxUpdatesPerIncident) +
                                              " updates, the most it takes");
  }
  SQLite::Statement s(w.db,
                      "INSERT INTO incident_updates (incident_id, at_ms, status, text) VALUES (?, ?, ?, ?)");
  s.bind(1, u.incident_id);
  s.bind(2, ms(u.at));
  s.bind(3, std::string(to_string(u.status)));
  s.bind(4, u.text);
  s.exec();
  return Ok{};
}

}  // namespace trainwatch::sqlite
