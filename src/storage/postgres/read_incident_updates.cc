// Updates posted about incidents: see reads.h.
#include <string>

#include "storage/postgres/reads.h"

namespace trainwatch::postgres {

Result<std::map<int64_t, std::vector<IncidentUpdate>>> read_incident_updates(
    Tx& tx, const std::vector<int64_t>& incident_ids) {
  std::map<int64_t, std::vector<IncidentUpdate>> out;
  // The ids as one array parameter: one statement whatever their number.
  std::string ids = "{";
  for (size_t i = 0; i < incident_ids.size(); ++i) {
    if (i > 0) ids += ',';
    ids += std::to_string(incident_ids[i]);
  }
  ids += '}';
  for (const pqxx::row& row :
       tx.exec_params("SELECT id, incident_id, at_ms, status, text FROM incident_updates "
                      "WHERE incident_id = ANY($1::bigint[]) ORDER BY incident_id, id",
                      ids)) {
    IncidentUpdate u;
    u.id = row[0].as<int64_t>();
    u.incident_id = row[1].as<int64_t>();
    u.at = from_unix_ms(row[2].as<int64_t>());
    // A status written by a newer trainwatch that this one does not know reads as investigating.
    u.status = incident_update_status_from_string(row[3].as<std::string>())
                   .value_or(IncidentUpdateStatus::kInvestigating);
    u.text = row[4].as<std::string>();
    auto& list = out[u.incident_id];
    if (static_cast<int>(list.size()) < kMaxUpdatesPerIncident) list.push_back(std::move(u));
  }
  return out;
}

}  // namespace trainwatch::postgres
