// Results, states, incidents, rollups and pruning: see write_ops.h.
#include <SQLiteCpp/Database.h>

#include <string>

#include "storage/sqlite/write_ops.h"
#include "storage/store_errors.h"

namespace trainwatch::sqlite {
namespace {

constexpr int64_t kHourMs = 3'600'000;
constexpr int64_t kDayMs = 86'400'000;

std::string rollup_upsert(const char* table) {
  return std::string("INSERT INTO ") + table +
         " (monitor, start_ms, checks, ok, latency_sum_ms) VALUES (?, ?, 1, ?, ?) "
         "ON CONFLICT (monitor, start_ms) DO UPDATE SET checks = checks + 1, ok = ok + excluded.ok, "
         "latency_sum_ms = latency_sum_ms + excluded.latency_sum_ms";
}

void add_to_rollup(SQLite::Statement& statement, const RecordResult& op, int64_t width_ms) {
  SQLite::Statement& s = fresh(statement);
  const CheckResult& c = op.result;
  const int64_t at = ms(c.at);
  // Floor division: results before 1970 (a broken clock) still land in one bucket.
  const int64_t start = at - (((at % width_ms) + width_ms) % width_ms);
  s.bind(1, op.monitor);
  s.bind(2, start);
  s.bind(3, counts_as_up(op) ? 1 : 0);
  s.bind(4, c.latency_ms);
  s.exec();
}

Status save_state(PreparedWrites& w, const std::string& monitor, const MonitorState& st) {
  SQLite::Statement& s = fresh(w.results.upsert_state);
  s.bind(1, monitor);
  s.bind(2, std::string(to_string(st.status)));
  s.bind(3, ms(st.since));
  bind_optional(s, 4, st.last_check);
  s.bind(5, st.last_latency_ms);
  s.bind(6, st.last_error);
  s.bind(7, st.consecutive_failures);
  bind_optional(s, 8, st.open_incident_id);
  s.exec();
  return Ok{};
}

void close_incident(PreparedWrites& w, const CloseIncident& op) {
  SQLite::Statement& s = fresh(w.results.close_incident);
  s.bind(1, ms(op.ended));
  s.bind(2, op.id);
  s.exec();
}

}  // namespace

ResultStatements::ResultStatements(SQLite::Database& db)
    : insert_result(db,
                    "INSERT INTO check_results (monitor, at_ms, ok, latency_ms, cause, http_status, dns_ms, "
                    "connect_ms, tls_ms, first_byte_ms, total_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
      upsert_state(
          db,
          "INSERT INTO monitor_state (monitor, status, since_ms, last_check_ms, last_latency_ms, "
          "last_error, consecutive_failures, open_incident_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
          "ON CONFLICT (monitor) DO UPDATE SET status = excluded.status, since_ms = excluded.since_ms, "
          "last_check_ms = excluded.last_check_ms, last_latency_ms = excluded.last_latency_ms, "
          "last_error = excluded.last_error, consecutive_failures = excluded.consecutive_failures, "
          "open_incident_id = excluded.open_incident_id"),
      insert_incident(
          db,
          "INSERT INTO incidents (id, monitor, started_ms, ended_ms, cause, caused_by) VALUES (?, ?, ?, ?, ?, ?)"),
      // COALESCE keeps the first end time: closing twice is harmless and changes nothing.
      close_incident(db, "UPDATE incidents SET ended_ms = COALESCE(ended_ms, ?) WHERE id = ?"),
      add_hourly(db, rollup_upsert("uptime_hourly")),
      add_daily(db, rollup_upsert("uptime_daily")),
      // Oldest first through the at_ms index; LIMIT keeps one prune short.
      prune(db,
            "DELETE FROM check_results WHERE id IN (SELECT id FROM check_results WHERE at_ms < ? "
            "ORDER BY at_ms LIMIT ?)"),
      prune_hourly(db,
                   "DELETE FROM uptime_hourly WHERE (monitor, start_ms) IN (SELECT monitor, start_ms FROM "
                   "uptime_hourly WHERE start_ms < ? ORDER BY start_ms LIMIT ?)"),
      // Pings are in arrival order and have no time index: look only at the oldest
      // `max_rows` of them, so a prune with nothing to delete reads a chunk, not the log.
      // A chain that reaches a deleted ping ends there.
      prune_pings(db,
                  "DELETE FROM heartbeat_pings WHERE id IN (SELECT id FROM (SELECT id, at_ms FROM "
                  "heartbeat_pings ORDER BY id LIMIT ?) WHERE at_ms < ?)"),
      prune_node_reports(db,
                         "DELETE FROM node_reports WHERE id IN (SELECT id FROM node_reports WHERE "
                         "received_ms < ? ORDER BY received_ms LIMIT ?)"),
      prune_job_memos(db,
                      "DELETE FROM job_memos WHERE job IN (SELECT job FROM job_memos WHERE saved_ms < ? "
                      "ORDER BY saved_ms LIMIT ?)") {}

Status run_op(PreparedWrites& w, const RecordResult& op) {
  SQLite::Statement& r = fresh(w.results.insert_result);
  const CheckResult& c = op.result;
  r.bind(1, op.monitor);
  r.bind(2, ms(c.at));
  r.bind(3, c.ok ? 1 : 0);
  r.bind(4, c.latency_ms);
  r.bind(5, c.cause);
  r.bind(6, c.http_status);
  r.bind(7, c.timings.dns_ms);
  r.bind(8, c.timings.connect_ms);
  r.bind(9, c.timings.tls_ms);
  r.bind(10, c.timings.first_byte_ms);
  r.bind(11, c.timings.total_ms);
  r.exec();
  if (op.opened) (void)run_op(w, OpenIncident{*op.opened});  // it throws on failure; it never returns one
  if (op.closed) close_incident(w, *op.closed);
  for (const NewDelivery& d : op.outbox) insert_delivery(w, d);
  add_to_rollup(w.results.add_hourly, op, kHourMs);
  add_to_rollup(w.results.add_daily, op, kDayMs);
  return save_state(w, op.monitor, op.state);
}

Status run_op(PreparedWrites& w, const SaveState& op) { return save_state(w, op.monitor, op.state); }

Status run_op(PreparedWrites& w, const OpenIncident& op) {
  SQLite::Statement& s = fresh(w.results.insert_incident);
  const Incident& i = op.incident;
  s.bind(1, i.id);
  s.bind(2, i.monitor);
  s.bind(3, ms(i.started));
  bind_optional(s, 4, i.ended);
  s.bind(5, i.cause);
  s.bind(6, i.caused_by);
  s.exec();
  return Ok{};
}

Status run_op(PreparedWrites& w, const CloseIncident& op) {
  SQLite::Statement& s = fresh(w.results.close_incident);
  s.bind(1, ms(op.ended));
  s.bind(2, op.id);
  if (s.exec() == 0) {
    return make_error(store_error::kNotFound,
                      "cannot close incident " + std::to_string(op.id) + ": no such incident");
  }
  return Ok{};
}

Status run_op(PreparedWrites& w, const PruneResults& op) {
  SQLite::Statement& s = fresh(w.results.prune);
  s.bind(1, ms(op.before));
  s.bind(2, op.max_rows);
  s.exec();
  SQLite::Statement& h = fresh(w.results.prune_hourly);
  h.bind(1, ms(op.before));
  h.bind(2, op.max_rows);
  h.exec();
  SQLite::Statement& p = fresh(w.results.prune_pings);
  p.bind(1, op.max_rows);
  p.bind(2, ms(op.before));
  p.exec();
  SQLite::Statement& n = fresh(w.results.prune_node_reports);
  n.bind(1, ms(op.before));
  n.bind(2, op.max_rows);
  n.exec();
  SQLite::Statement& m = fresh(w.results.prune_job_memos);
  m.bind(1, ms(op.before));
  m.bind(2, op.max_rows);
  m.exec();
  return Ok{};
}

}  // namespace trainwatch::sqlite
