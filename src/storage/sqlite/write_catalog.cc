// Monitors, maintenance windows and notification channels created through the API: see
// write_ops.h.
#include <SQLiteCpp/Database.h>

#include "storage/sqlite/write_ops.h"

namespace trainwatch::sqlite {

Status run_op(PreparedWrites& w, const SaveApiMonitor& op) {
  SQLite::Statement s(w.db,
                      "INSERT INTO api_monitors (name, spec_json) VALUES (?, ?) "
                      "ON CONFLICT (name) DO UPDATE SET spec_json = excluded.spec_json");
  s.bind(1, op.name);
  s.bind(2, op.spec_json);
  s.exec();
  return Ok{};
}

Status run_op(PreparedWrites& w, const DeleteApiMonitor& op) {
  SQLite::Statement s(w.db, "DELETE FROM api_monitors WHERE name = ?");
  s.bind(1, op.name);
  s.exec();
  return Ok{};
}

Status run_op(PreparedWrites& w, const SaveApiWindow& op) {
  SQLite::Statement s(w.db, "INSERT INTO api_maintenance (id, spec_json, created_ms) VALUES (?, ?, ?)");
  s.bind(1, op.id);
  s.bind(2, op.spec_json);
  s.bind(3, ms(op.created));
  s.exec();
  return Ok{};
}

Status run_op(PreparedWrites& w, const DeleteApiWindow& op) {
  SQLite::Statement s(w.db, "DELETE FROM api_maintenance WHERE id = ?");
  s.bind(1, op.id);
  s.exec();
  return Ok{};
}

Status run_op(PreparedWrites& w, const SaveApiChannel& op) {
  SQLite::Statement s(w.db,
                      "INSERT INTO api_channels (name, spec_json) VALUES (?, ?) "
                      "ON CONFLICT (name) DO UPDATE SET spec_json = excluded.spec_json");
  s.bind(1, op.name);
  s.bind(2, op.spec_json);
  s.exec();
  return Ok{};
}

Status run_op(PreparedWrites& w, const DeleteApiChannel& op) {
  SQLite::Statement s(w.db, "DELETE FROM api_channels WHERE name = ?");
  s.bind(1, op.name);
  s.exec();
  return Ok{};
}

}  // namespace trainwatch::sqlite
