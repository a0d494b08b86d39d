// Monitors, maintenance windows and notification channels created through the API: see
// reads.h.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include "storage/sqlite/reads.h"

namespace trainwatch::sqlite {

Result<std::vector<ApiMonitorSpec>> read_api_monitors(SQLite::Database& db) {
  SQLite::Statement q(db, "SELECT name, spec_json FROM api_monitors ORDER BY name");
  std::vector<ApiMonitorSpec> out;
  while (q.executeStep())
    out.push_back(ApiMonitorSpec{q.getColumn(0).getString(), q.getColumn(1).getString()});
  return out;
}

Result<std::vector<ApiWindowSpec>> read_api_windows(SQLite::Database& db) {
  SQLite::Statement q(db, "SELECT id, spec_json, created_ms FROM api_maintenance ORDER BY id");
  std::vector<ApiWindowSpec> out;
  while (q.executeStep()) {
    out.push_back(ApiWindowSpec{q.getColumn(0).getInt64(), q.getColumn(1).getString(),
                                from_unix_ms(q.getColumn(2).getInt64())});
  }
  return out;
}

Result<int64_t> read_next_api_window_id(SQLite::Database& db) {
  // AUTOINCREMENT keeps the highest id ever inserted in sqlite_sequence, even once its
  // row is deleted; MAX(id) covers a table that never had one.
  return db
      .execAndGet(
          "SELECT MAX(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'api_maintenance'), 0), "
          "COALESCE((SELECT MAX(id) FROM api_maintenance), 0)) + 1")
      .getInt64();
}

Result<std::vector<ApiChannelSpec>> read_api_channels(SQLite::Database& db) {
  SQLite::Statement q(db, "SELECT name, spec_json FROM api_channels ORDER BY name");
  std::vector<ApiChannelSpec> out;
  while (q.executeStep())
    out.push_back(ApiChannelSpec{q.getColumn(0).getString(), q.getColumn(1).getString()});
  return out;
}

}  // namespace trainwatch::sqlite
