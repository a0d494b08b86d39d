// Results, states, incidents, rollups and pruning: see write_ops.h.
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "storage/postgres/day_partitions.h"
#include "storage/postgres/fence.h"
#include "storage/postgres/multi_row.h"
#include "storage/postgres/write_ops.h"
#include "storage/store_errors.h"

namespace trainwatch::postgres {
namespace {

constexpr int64_t kHourMs = 3'600'000;

// A bound on one prune's drops: a backlog of days (retention shortened from a year to a
// week) goes a month of days per prune, a prune every RetentionPruner::kPruneInterval.
constexpr int kMaxDaysDroppedPerPrune = 31;

std::string rollup_upsert(const char* table) {
  return std::string("INSERT INTO ") + table +
         " AS r (monitor, start_ms, checks, ok, latency_sum_ms) VALUES ($1, $2, 1, $3, $4) "
         "ON CONFLICT (monitor, start_ms) DO UPDATE SET checks = r.checks + 1, ok = r.ok + excluded.ok, "
         "latency_sum_ms = r.latency_sum_ms + excluded.latency_sum_ms";
}

// The start of the rollup bucket `at` falls in. Floor division: results before 1970 (a
// broken clock) still land in one bucket.
int64_t bucket_start(int64_t at, int64_t width_ms) { return at - (((at % width_ms) + width_ms) % width_ms); }

void add_to_rollup(Tx& tx, const char* statement, const RecordResult& op, int64_t width_ms) {
  tx.exec_prepared(statement, op.monitor, bucket_start(ms(op.result.at), width_ms), counts_as_up(op) ? 1 : 0,
                   op.result.latency_ms);
}

struct Bucket {
  int64_t checks = 0;
  int64_t ok = 0;
  double latency_sum_ms = 0;
};
using Buckets = std::map<std::pair<std::string, int64_t>, Bucket>;  // by monitor and start

void add_rollups(Tx& tx, const std::string& table, const Buckets& buckets) {
  std::vector<ParamRow> rows;
  rows.reserve(buckets.size());
  for (const auto& [key, b] : buckets)
    rows.push_back(
        {key.first, integer(key.second), integer(b.checks), integer(b.ok), real(b.latency_sum_ms)});
  insert_rows(tx, "INSERT INTO " + table + " AS r (monitor, start_ms, checks, ok, latency_sum_ms)",
              {"", "::bigint", "::bigint", "::bigint", "::double precision"}, rows,
              "ON CONFLICT (monitor, start_ms) DO UPDATE SET checks = r.checks + excluded.checks, "
              "ok = r.ok + excluded.ok, latency_sum_ms = r.latency_sum_ms + excluded.latency_sum_ms");
}

}  // namespace

void prepare_write_statements(pqxx::connection_base& conn) {
  conn.prepare(
      "insert_result",
      "INSERT INTO check_results (monitor, at_ms, ok, latency_ms, cause, http_status, dns_ms, connect_ms, "
      "tls_ms, first_byte_ms, total_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)");
  // The version counts updates, for people reading the table; the compare-and-set of a
  // state change is on its open incident (RecordResult::expect).
  conn.prepare(
      "upsert_state",
      "INSERT INTO monitor_state AS s (monitor, status, since_ms, last_check_ms, last_latency_ms, "
      "last_error, consecutive_failures, open_incident_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
      "ON CONFLICT (monitor) DO UPDATE SET status = excluded.status, since_ms = excluded.since_ms, "
      "last_check_ms = excluded.last_check_ms, last_latency_ms = excluded.last_latency_ms, "
      "last_error = excluded.last_error, consecutive_failures = excluded.consecutive_failures, "
      "open_incident_id = excluded.open_incident_id, version = s.version + 1, txid = pg_current_xact_id()");
  // A result's state never ends a pause: on replicas the pause may be asked of one that
  // does not own the monitor, while its owner's result for the moment before commits.
  conn.prepare(
      "upsert_result_state",
      "INSERT INTO monitor_state AS s (monitor, status, since_ms, last_check_ms, last_latency_ms, "
      "last_error, consecutive_failures, open_incident_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
      "ON CONFLICT (monitor) DO UPDATE SET status = excluded.status, since_ms = excluded.since_ms, "
      "last_check_ms = excluded.last_check_ms, last_latency_ms = excluded.last_latency_ms, "
      "last_error = excluded.last_error, consecutive_failures = excluded.consecutive_failures, "
      "open_incident_id = excluded.open_incident_id, version = s.version + 1, txid = pg_current_xact_id() "
      "WHERE s.status <> 'paused'");
  conn.prepare("lock_state", "SELECT open_incident_id FROM monitor_state WHERE monitor = $1 FOR UPDATE");
  conn.prepare("lock_owner", "SELECT epoch, owner FROM monitor_owners WHERE monitor = $1 FOR SHARE");
  conn.prepare("insert_incident",
               "INSERT INTO incidents (id, monitor, started_ms, ended_ms, cause, caused_by) "
               "VALUES ($1, $2, $3, $4, $5, $6)");
  // COALESCE keeps the first end time: closing twice is harmless and changes nothing.
  conn.prepare("close_incident", "UPDATE incidents SET ended_ms = COALESCE(ended_ms, $1) WHERE id = $2");
  conn.prepare("add_hourly", rollup_upsert("uptime_hourly"));
  conn.prepare("add_daily", rollup_upsert("uptime_daily"));
  conn.prepare("insert_ping",
               "INSERT INTO heartbeat_pings (monitor, at_ms, kind, exit_code, source, user_agent, body, "
               "body_truncated, run_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)");
  // A reminder once per incident, channel and due time (store.h, NewDelivery).
  conn.prepare(
      "insert_delivery",
      "INSERT INTO deliveries (channel, monitor, incident_id, kind, event, created_ms, due_ms) "
      "SELECT $1::text, $2::text, $3::bigint, $4::text, $5::text, $6::bigint, $7::bigint "
      "WHERE $4::text <> 'reminder' OR NOT EXISTS (SELECT 1 FROM deliveries WHERE monitor = $2::text "
      "AND incident_id = $3::bigint AND channel = $1::text AND kind = 'reminder' AND due_ms = $7::bigint)");
}

Status run_op(Tx& tx, const RecordResult& op) {
  // First: a fenced result stores nothing, not even its history (the check may have run
  // while another replica checked the same monitor; fence.h).
  if (op.epoch) {
    if (Status fence = check_fence(tx, op.monitor, *op.epoch); !fence) return fence;
  }
  if (op.expect) {
    // FOR UPDATE: a writer checking the same row at the same time waits for this
    // transaction, then reads what it stored.
    const pqxx::result row = tx.exec_prepared("lock_state", op.monitor);
    if (!row.empty()) {
      const std::optional<int64_t> stored =
          row[0][0].is_null() ? std::nullopt : std::optional<int64_t>(row[0][0].as<int64_t>());
      if (stored != op.expect->open_incident_id) {
        auto name = [](const std::optional<int64_t>& id) { return id ? "#" + std::to_string(*id) : "none"; };
        return make_error(store_error::kConflict,
                          "another replica changed it first (open incident: " + name(stored) + ", expected " +
                              name(op.expect->open_incident_id) + ")");
      }
    }
  }
  const CheckResult& c = op.result;
  tx.exec_prepared("insert_result", op.monitor, ms(c.at), c.ok, c.latency_ms, c.cause, c.http_status,
                   c.timings.dns_ms, c.timings.connect_ms, c.timings.tls_ms, c.timings.first_byte_ms,
                   c.timings.total_ms);
  if (op.opened) (void)run_op(tx, OpenIncident{*op.opened});  // it throws on failure; it never returns one
  if (op.closed) tx.exec_prepared("close_incident", ms(op.closed->ended), op.closed->id);
  for (const NewDelivery& d : op.outbox) insert_delivery(tx, d);
  add_to_rollup(tx, "add_hourly", op, kHourMs);
  add_to_rollup(tx, "add_daily", op, kDayMs);
  const MonitorState& st = op.state;
  tx.exec_prepared("upsert_result_state", op.monitor, std::string(to_string(st.status)), ms(st.since),
                   ms(st.last_check), st.last_latency_ms, st.last_error, st.consecutive_failures,
                   st.open_incident_id);
  return Ok{};
}

bool is_plain(const RecordResult& op) { return !op.opened && !op.closed && op.outbox.empty() && !op.expect; }

std::vector<Status> insert_results(Tx& tx, const std::vector<const RecordResult*>& all) {
  const std::vector<bool> admitted = check_fences(tx, all);
  std::vector<Status> outcomes;
  std::vector<const RecordResult*> results;
  outcomes.reserve(all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    if (admitted[i]) {
      outcomes.emplace_back(Ok{});
      results.push_back(all[i]);
    } else {
      outcomes.emplace_back(
          make_error(store_error::kFenced, "fenced: the monitor was claimed under a newer epoch"));
    }
  }
  if (results.empty()) return outcomes;
  std::vector<ParamRow> rows;
  rows.reserve(results.size());
  Buckets hourly;
  Buckets daily;
  // One row per monitor in an upsert (PostgreSQL refuses to update a row twice in one
  // statement): the newest state of each, as the results were written in order.
  std::map<std::string_view, const MonitorState*> newest;
  for (const RecordResult* r : results) {
    const CheckResult& c = r->result;
    const HttpTimings& t = c.timings;
    rows.push_back({r->monitor, integer(ms(c.at)), boolean(c.ok), real(c.latency_ms), c.cause,
                    integer(c.http_status), real(t.dns_ms), real(t.connect_ms), real(t.tls_ms),
                    real(t.first_byte_ms), real(t.total_ms)});
    for (auto [buckets, width] : {std::pair{&hourly, kHourMs}, std::pair{&daily, kDayMs}}) {
      Bucket& b = (*buckets)[{r->monitor, bucket_start(ms(c.at), width)}];
      ++b.checks;
      b.ok += counts_as_up(*r) ? 1 : 0;
      b.latency_sum_ms += c.latency_ms;
    }
    newest[r->monitor] = &r->state;
  }
  constexpr const char* kReal = "::double precision";
  insert_rows(
      tx,
      "INSERT INTO check_results (monitor, at_ms, ok, latency_ms, cause, http_status, dns_ms, connect_ms, "
      "tls_ms, first_byte_ms, total_ms)",
      {"", "::bigint", "::boolean", kReal, "", "::integer", kReal, kReal, kReal, kReal, kReal}, rows);
  add_rollups(tx, "uptime_hourly", hourly);
  add_rollups(tx, "uptime_daily", daily);
  std::vector<ParamRow> states;
  states.reserve(newest.size());
  for (const auto& [monitor, st] : newest) {
    states.push_back({std::string(monitor), std::string(to_string(st->status)), integer(ms(st->since)),
                      integer(ms(st->last_check)), real(st->last_latency_ms), st->last_error,
                      integer(st->consecutive_failures), integer(st->open_incident_id)});
  }
  // As upsert_result_state: a result's state never ends a pause.
  insert_rows(
      tx,
      "INSERT INTO monitor_state AS s (monitor, status, since_ms, last_check_ms, last_latency_ms, "
      "last_error, consecutive_failures, open_incident_id)",
      {"", "", "::bigint", "::bigint", kReal, "", "::integer", "::bigint"}, states,
      "ON CONFLICT (monitor) DO UPDATE SET status = excluded.status, since_ms = excluded.since_ms, "
      "last_check_ms = excluded.last_check_ms, last_latency_ms = excluded.last_latency_ms, "
      "last_error = excluded.last_error, consecutive_failures = excluded.consecutive_failures, "
      "open_incident_id = excluded.open_incident_id, version = s.version + 1, txid = pg_current_xact_id() WHERE s.status <> 'paused'");
  return outcomes;
}

Status run_op(Tx& tx, const SaveState& op) {
  const MonitorState& st = op.state;
  tx.exec_prepared("upsert_state", op.monitor, std::string(to_string(st.status)), ms(st.since),
                   ms(st.last_check), st.last_latency_ms, st.last_error, st.consecutive_failures,
                   st.open_incident_id);
  return Ok{};
}

Status run_op(Tx& tx, const OpenIncident& op) {
  const Incident& i = op.incident;
  tx.exec_prepared("insert_incident", i.id, i.monitor, ms(i.started), ms(i.ended), i.cause, i.caused_by);
  return Ok{};
}

Status run_op(Tx& tx, const CloseIncident& op) {
  if (tx.exec_prepared("close_incident", ms(op.ended), op.id).affected_rows() == 0) {
    return make_error(store_error::kNotFound,
                      "cannot close incident " + std::to_string(op.id) + ": no such incident");
  }
  return Ok{};
}

Status run_op(Tx& tx, const PruneResults& op) {
  // Whole days first, a DROP TABLE each (day_partitions.h); then what is older than the
  // cutoff in the day it falls in, and in the default partition, row by row, oldest first,
  // at most max_rows: the retention holds to the millisecond, as on SQLite. The outer
  // `at_ms < $1` lets PostgreSQL skip the partitions after the cutoff's day; the ids as
  // an array, not `IN (SELECT …)`, have it find them through each partition's primary
  // key where a semi-join read the whole day's partition on every prune.
  (void)drop_day_partitions_before(tx, ms(op.before), kMaxDaysDroppedPerPrune);
  tx.exec_params(
      "DELETE FROM check_results WHERE at_ms < $1 AND id = ANY (ARRAY(SELECT id FROM check_results "
      "WHERE at_ms < $1 ORDER BY at_ms LIMIT $2))",
      ms(op.before), op.max_rows);
  tx.exec_params(
      "DELETE FROM uptime_hourly WHERE (monitor, start_ms) IN (SELECT monitor, start_ms FROM uptime_hourly "
      "WHERE start_ms < $1 ORDER BY start_ms LIMIT $2)",
      ms(op.before), op.max_rows);
  // Pings, as in SQLite: only the oldest `max_rows` by arrival are looked at, so a prune
  // with nothing to delete reads a chunk, not the log.
  tx.exec_params(
      "DELETE FROM heartbeat_pings WHERE id IN (SELECT id FROM (SELECT id, at_ms FROM heartbeat_pings "
      "ORDER BY id LIMIT $1) AS oldest WHERE at_ms < $2)",
      op.max_rows, ms(op.before));
  tx.exec_params(
      "DELETE FROM node_reports WHERE (job, node) IN (SELECT job, node FROM node_reports WHERE received_ms < $1 "
      "ORDER BY received_ms LIMIT $2)",
      ms(op.before), op.max_rows);
  tx.exec_params(
      "DELETE FROM job_memos WHERE job IN (SELECT job FROM job_memos WHERE saved_ms < $1 ORDER BY saved_ms LIMIT $2)",
      ms(op.before), op.max_rows);
  return Ok{};
}

}  // namespace trainwatch::postgres
