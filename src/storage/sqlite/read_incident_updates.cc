// Updates posted about incidents: see reads.h.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <string>

#include "storage/sqlite/reads.h"

namespace trainwatch::sqlite {

Result<std::map<int64_t, std::vector<IncidentUpdate>>> read_incident_updates(
    SQLite::Database& db, const std::vector<int64_t>& incident_ids) {
  std::string sql =
      "SELECT id, incident_id, at_ms, status, text FROM incident_updates WHERE incident_id IN (";
  for (size_t i = 0; i < incident_ids.size(); ++i) sql += i == 0 ? "?" : ", ?";
  sql += ") ORDER BY incident_id, id";
  SQLite::Statement q(db, sql);
  for (size_t i = 0; i < incident_ids.size(); ++i) q.bind(static_cast<int>(i + 1), incident_ids[i]);
  std::map<int64_t, std::vector<IncidentUpdate>> out;
  while (q.executeStep()) {
    IncidentUpdate u;
    u.id = q.getColumn(0).getInt64();
    u.incident_id = q.getColumn(1).getInt64();
    u.at = from_unix_ms(q.getColumn(2).getInt64());
    // A status written by a newer trainwatch that this one does not know reads as investigating.
    u.status = incident_update_status_from_string(q.getColumn(3).getString())
                   .value_or(IncidentUpdateStatus::kInvestigating);
    u.text = q.getColumn(4).getString();
    auto& list = out[u.incident_id];
    if (static_cast<int>(list.size()) < kMaxUpdatesPerIncident) list.push_back(std::move(u));
  }
  return out;
}

}  // namespace trainwatch::sqlite
