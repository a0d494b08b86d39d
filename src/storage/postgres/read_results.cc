// States, results, incidents and rollups: see reads.h.
#include <algorithm>

#include "storage/postgres/reads.h"
#include "storage/store_errors.h"

namespace trainwatch::postgres {
namespace {

constexpr const char* kIncidentColumns =
    "SELECT id, monitor, started_ms, ended_ms, cause, caused_by FROM incidents";

Incident incident_from_row(const pqxx::row& row) {
  return Incident{row[0].as<int64_t>(),  row[1].as<std::string>(), from_unix_ms(row[2].as<int64_t>()),
                  optional_time(row[3]), row[4].as<std::string>(), row[5].as<std::string>()};
}

int clamped(int limit) { return std::clamp(limit, 0, kMaxRowsPerRead); }

UptimeBucket bucket_from(const pqxx::row& row, int first) {
  return UptimeBucket{row[first].as<int64_t>(), row[first + 1].as<int64_t>(), row[first + 2].as<int64_t>(),
                      row[first + 3].as<double>()};
}

const char* rollup_table(RollupResolution r) {
  return r == RollupResolution::kHour ? "uptime_hourly" : "uptime_daily";
}

}  // namespace

namespace {

constexpr const char* kStateColumns =
    "SELECT monitor, status, since_ms, last_check_ms, last_latency_ms, last_error, consecutive_failures, "
    "open_incident_id FROM monitor_state ";

Result<std::vector<StoredState>> states_of(const pqxx::result& rows) {
  std::vector<StoredState> out;
  out.reserve(rows.size());
  for (const pqxx::row& row : rows) {
    StoredState s;
    s.monitor = row[0].as<std::string>();
    const std::string status = row[1].as<std::string>();
    auto parsed = monitor_status_from_string(status);
    if (!parsed) {
      return make_error(store_error::kCorrupt,
                        "monitor '" + s.monitor + "' has unknown status '" + status + "' in the database");
    }
    s.state.status = *parsed;
    s.state.since = from_unix_ms(row[2].as<int64_t>());
    s.state.last_check = optional_time(row[3]);
    s.state.last_latency_ms = row[4].as<double>();
    s.state.last_error = row[5].as<std::string>();
    s.state.consecutive_failures = row[6].as<int>();
    if (!row[7].is_null()) s.state.open_incident_id = row[7].as<int64_t>();
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

Result<std::vector<StoredState>> read_states(Tx& tx) {
  return states_of(tx.exec(std::string(kStateColumns) + "ORDER BY monitor"));
}

Result<std::optional<MonitorState>> read_state_of(Tx& tx, const std::string& monitor) {
  auto states = states_of(tx.exec_params(std::string(kStateColumns) + "WHERE monitor = $1", monitor));
  if (!states) return states.error();
  if (states->empty()) return std::optional<MonitorState>();
  return std::optional<MonitorState>(std::move(states->front().state));
}

// As read_node_reports_after (read_jobs.cc): a transaction id below this snapshot's xmin
// is final, so no state committed late is skipped. One row per monitor: no paging.
Result<StateFeed> read_states_after(Tx& tx, int64_t cursor) {
  const auto horizon =
      tx.exec1("SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint")[0].as<int64_t>();
  auto states = states_of(tx.exec_params(
      std::string(kStateColumns) + "WHERE txid >= $1::text::xid8 AND txid < $2::text::xid8 ORDER BY txid",
      std::to_string(cursor), std::to_string(horizon)));
  if (!states) return states.error();
  return StateFeed{std::move(*states), horizon};
}

Result<std::vector<Incident>> read_incidents(Tx& tx, const IncidentQuery& query) {
  // One-shot statements are planned with their parameters, so a NULL filter drops out
  // of the plan and the (monitor, id) index is still used when a monitor is given.
  std::vector<Incident> out;
  for (const pqxx::row& row :
       tx.exec_params(std::string(kIncidentColumns) +
                          " WHERE ($1::text IS NULL OR monitor = $1) AND ($2::bigint IS NULL OR id < $2) "
                          "ORDER BY id DESC LIMIT $3",
                      query.monitor, query.before_id, clamped(query.limit))) {
    out.push_back(incident_from_row(row));
  }
  return out;
}

Result<std::optional<Incident>> read_incident(Tx& tx, int64_t id) {
  const pqxx::result r = tx.exec_params(std::string(kIncidentColumns) + " WHERE id = $1", id);
  if (r.empty()) return std::optional<Incident>();
  return std::optional<Incident>(incident_from_row(r[0]));
}

Result<std::vector<CheckResult>> read_results(Tx& tx, const ResultQuery& query) {
  std::vector<CheckResult> out;
  for (
      const pqxx::row& row : tx.exec_params(
          "SELECT at_ms, ok, latency_ms, cause, http_status, dns_ms, connect_ms, tls_ms, first_byte_ms, total_ms "
          "FROM check_results WHERE monitor = $1 AND ($2::bigint IS NULL OR at_ms < $2) "
          "ORDER BY at_ms DESC, id DESC LIMIT $3",
          query.monitor, query.before_ms, clamped(query.limit))) {
    CheckResult r;
    r.at = from_unix_ms(row[0].as<int64_t>());
    r.ok = row[1].as<bool>();
    r.latency_ms = row[2].as<double>();
    r.cause = row[3].as<std::string>();
    r.http_status = row[4].as<int>();
    r.timings = HttpTimings{row[5].as<double>(), row[6].as<double>(), row[7].as<double>(),
                            row[8].as<double>(), row[9].as<double>()};
    out.push_back(std::move(r));
  }
  return out;
}

Result<int64_t> read_next_incident_id(Tx& tx) {
  return tx.exec1("SELECT COALESCE(MAX(id), 0) + 1 FROM incidents")[0].as<int64_t>();
}

// The high-water row is locked until the transaction commits, so reservations made at
// once are handed out one after the other. MAX(id) covers incidents stored before any
// reservation (by one serve, or an older version).
Result<int64_t> reserve_incident_ids_in(Tx& tx, int count) {
  const auto high =
      tx.exec_params1(
            "INSERT INTO id_high_water AS h (name, high) "
            "VALUES ('incidents', (SELECT COALESCE(MAX(id), 0) FROM incidents) + $1) "
            "ON CONFLICT (name) DO UPDATE SET high = GREATEST(h.high, (SELECT COALESCE(MAX(id), 0) "
            "FROM incidents)) + $1 RETURNING high",
            count)[0]
          .as<int64_t>();
  return high - count + 1;
}

Result<std::vector<UptimeBucket>> read_uptime(Tx& tx, const UptimeQuery& query) {
  std::vector<UptimeBucket> out;
  for (const pqxx::row& row : tx.exec_params(
           std::string("SELECT start_ms, checks, ok, latency_sum_ms FROM ") + rollup_table(query.resolution) +
               " WHERE monitor = $1 AND start_ms >= $2 AND start_ms < $3 ORDER BY start_ms LIMIT $4",
           query.monitor, query.from_ms, query.to_ms, kMaxRowsPerRead)) {
    out.push_back(bucket_from(row, 0));
  }
  return out;
}

Result<std::map<std::string, std::vector<UptimeBucket>>> read_uptime_of(
    Tx& tx, const std::vector<std::string>& monitors, const UptimeQuery& query) {
  // Names are quoted by libpq (libpqxx 6 cannot bind an array); at most
  // Store::kMaxRowsPerBatch of them, checked by the caller.
  std::string names;
  for (const auto& m : monitors) names += (names.empty() ? "" : ", ") + tx.quote(m);
  std::map<std::string, std::vector<UptimeBucket>> out;
  for (const pqxx::row& row :
       tx.exec_params(std::string("SELECT monitor, start_ms, checks, ok, latency_sum_ms FROM ") +
                          rollup_table(query.resolution) + " WHERE monitor IN (" + names +
                          ") AND start_ms >= $1 AND start_ms < $2 ORDER BY monitor, start_ms "
                          "LIMIT $3",
                      query.from_ms, query.to_ms, kMaxRowsPerRead)) {
    out[row[0].as<std::string>()].push_back(bucket_from(row, 1));
  }
  return out;
}

}  // namespace trainwatch::postgres
