// States, results, incidents and rollups: see reads.h.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <algorithm>
#include <string>

#include "storage/sqlite/reads.h"
#include "storage/sqlite/sqlite_store.h"
#include "storage/store_errors.h"

namespace trainwatch::sqlite {
namespace {

constexpr int kMaxRowsPerRead = SqliteStore::kMaxRowsPerRead;

constexpr const char* kIncidentColumns =
    "SELECT id, monitor, started_ms, ended_ms, cause, caused_by FROM incidents";

Incident incident_from_row(SQLite::Statement& row) {
  Incident i;
  i.id = row.getColumn(0).getInt64();
  i.monitor = row.getColumn(1).getString();
  i.started = from_unix_ms(row.getColumn(2).getInt64());
  i.ended = optional_time(row.getColumn(3));
  i.cause = row.getColumn(4).getString();
  i.caused_by = row.getColumn(5).getString();
  return i;
}

const char* rollup_table(const UptimeQuery& query) {
  return query.resolution == RollupResolution::kHour ? "uptime_hourly" : "uptime_daily";
}

}  // namespace

std::optional<SystemTime> optional_time(const SQLite::Column& c) {
  if (c.isNull()) return std::nullopt;
  return from_unix_ms(c.getInt64());
}

Result<std::vector<StoredState>> read_states(SQLite::Database& db) {
  SQLite::Statement q(db,
                      "SELECT monitor, status, since_ms, last_check_ms, last_latency_ms, last_error, "
                      "consecutive_failures, open_incident_id FROM monitor_state ORDER BY monitor");
  std::vector<StoredState> out;
  while (q.executeStep()) {
    StoredState s;
    s.monitor = q.getColumn(0).getString();
    const std::string status = q.getColumn(1).getString();
    auto parsed = monitor_status_from_string(status);
    if (!parsed) {
      return make_error(store_error::kCorrupt,
                        "monitor '" + s.monitor + "' has unknown status '" + status + "' in the database");
    }
    s.state.status = *parsed;
    s.state.since = from_unix_ms(q.getColumn(2).getInt64());
    s.state.last_check = optional_time(q.getColumn(3));
    s.state.last_latency_ms = q.getColumn(4).getDouble();
    s.state.last_error = q.getColumn(5).getString();
    s.state.consecutive_failures = q.getColumn(6).getInt();
    if (!q.getColumn(7).isNull()) s.state.open_incident_id = q.getColumn(7).getInt64();
    out.push_back(std::move(s));
  }
  return out;
}

Result<std::vector<Incident>> read_incidents(SQLite::Database& db, const IncidentQuery& query) {
  // Conditions are added only when asked for: "(? IS NULL OR monitor = ?)" would keep
  // SQLite from using the (monitor, id) index.
  std::string sql = kIncidentColumns;
  const char* glue = " WHERE ";
  if (query.monitor) {
    sql += glue + std::string("monitor = ?");
    glue = " AND ";
  }
  if (query.before_id) sql += glue + std::string("id < ?");
  sql += " ORDER BY id DESC LIMIT ?";
  SQLite::Statement q(db, sql);
  int index = 1;
  if (query.monitor) q.bind(index++, *query.monitor);
  if (query.before_id) q.bind(index++, *query.before_id);
  q.bind(index, std::clamp(query.limit, 0, kMaxRowsPerRead));
  std::vector<Incident> out;
  while (q.executeStep()) out.push_back(incident_from_row(q));
  return out;
}

Result<std::optional<Incident>> read_incident(SQLite::Database& db, int64_t id) {
  SQLite::Statement q(db, std::string(kIncidentColumns) + " WHERE id = ?");
  q.bind(1, id);
  if (!q.executeStep()) return std::optional<Incident>();
  return std::optional<Incident>(incident_from_row(q));
}

Result<std::vector<CheckResult>> read_results(SQLite::Database& db, const ResultQuery& query) {
  std::string sql =
      "SELECT at_ms, ok, latency_ms, cause, http_status, dns_ms, connect_ms, tls_ms, first_byte_ms, "
      "total_ms "
      "FROM check_results WHERE monitor = ?";
  if (query.before_ms) sql += " AND at_ms < ?";
  sql += " ORDER BY at_ms DESC, id DESC LIMIT ?";
  SQLite::Statement q(db, sql);
  int index = 1;
  q.bind(index++, query.monitor);
  if (query.before_ms) q.bind(index++, *query.before_ms);
  q.bind(index, std::clamp(query.limit, 0, kMaxRowsPerRead));
  std::vector<CheckResult> out;
  while (q.executeStep()) {
    CheckResult r;
    r.at = from_unix_ms(q.getColumn(0).getInt64());
    r.ok = q.getColumn(1).getInt() != 0;
    r.latency_ms = q.getColumn(2).getDouble();
    r.cause = q.getColumn(3).getString();
    r.http_status = q.getColumn(4).getInt();
    r.timings =
        HttpTimings{q.getColumn(5).getDouble(), q.getColumn(6).getDouble(), q.getColumn(7).getDouble(),
                    q.getColumn(8).getDouble(), q.getColumn(9).getDouble()};
    out.push_back(std::move(r));
  }
  return out;
}

Result<int64_t> read_next_incident_id(SQLite::Database& db) {
  return db.execAndGet("SELECT COALESCE(MAX(id), 0) + 1 FROM incidents").getInt64();
}

Result<std::vector<UptimeBucket>> read_uptime(SQLite::Database& db, const UptimeQuery& query) {
  SQLite::Statement q(db,
                      std::string("SELECT start_ms, checks, ok, latency_sum_ms FROM ") + rollup_table(query) +
                          " WHERE monitor = ? AND start_ms >= ? AND start_ms < ? ORDER BY start_ms LIMIT ?");
  q.bind(1, query.monitor);
  q.bind(2, query.from_ms);
  q.bind(3, query.to_ms);
  q.bind(4, kMaxRowsPerRead);
  std::vector<UptimeBucket> out;
  while (q.executeStep()) {
    out.push_back(UptimeBucket{q.getColumn(0).getInt64(), q.getColumn(1).getInt64(),
                               q.getColumn(2).getInt64(), q.getColumn(3).getDouble()});
  }
  return out;
}

Result<std::map<std::string, std::vector<UptimeBucket>>> read_uptime_of(
    SQLite::Database& db, const std::vector<std::string>& monitors, const UptimeQuery& query) {
  std::string sql = std::string("SELECT monitor, start_ms, checks, ok, latency_sum_ms FROM ") +
                    rollup_table(query) + " WHERE monitor IN (";
  for (size_t i = 0; i < monitors.size(); ++i) sql += i == 0 ? "?" : ", ?";
  sql += ") AND start_ms >= ? AND start_ms < ? ORDER BY monitor, start_ms LIMIT ?";
  SQLite::Statement q(db, sql);
  int index = 1;
  for (const auto& m : monitors) q.bind(index++, m);
  q.bind(index++, query.from_ms);
  q.bind(index++, query.to_ms);
  q.bind(index, kMaxRowsPerRead);
  std::map<std::string, std::vector<UptimeBucket>> out;
  while (q.executeStep()) {
    out[q.getColumn(0).getString()].push_back(
        UptimeBucket{q.getColumn(1).getInt64(), q.getColumn(2).getInt64(), q.getColumn(3).getInt64(),
                     q.getColumn(4).getDouble()});
  }
  return out;
}

}  // namespace trainwatch::sqlite
