// The SQL of each write operation, run by the writer (writer.h) inside the batch's
// transaction, each under its own savepoint. One file per group of operations, as in
// storage/postgres: write_results.cc (results, states, incidents, rollups, pruning),
// write_heartbeat.cc (pings, tokens), write_outbox.cc (deliveries), write_catalog.cc (API
// monitors and windows), write_incident_updates.cc (updates posted about incidents),
// write_jobs.cc (node reports, job memos).
//
// Contract: each returns the operation's own failure (store.not_found, store.full) as a
// Status and throws SQLite::Exception for the store's failures; the writer classifies
// those and undoes the operation's savepoint.
//
// Threading: the writer thread only (PreparedWrites holds its connection's statements).
#pragma once

#include <cstdint>
#include <optional>

#include <SQLiteCpp/Statement.h>

#include "storage/store.h"

namespace SQLite {
class Database;
}

namespace trainwatch::sqlite {

class PingChains;

// The statements an operation runs often, prepared once per connection: compiling them per
// operation cost more than the INSERT itself. One struct per group, prepared in its file.
struct ResultStatements {
  explicit ResultStatements(SQLite::Database& db);
  SQLite::Statement insert_result;
  SQLite::Statement upsert_state;
  SQLite::Statement insert_incident;
  SQLite::Statement close_incident;
  SQLite::Statement add_hourly;
  SQLite::Statement add_daily;
  SQLite::Statement prune;
  SQLite::Statement prune_hourly;
  SQLite::Statement prune_pings;
  SQLite::Statement prune_node_reports;
  SQLite::Statement prune_job_memos;
};

struct HeartbeatStatements {
  explicit HeartbeatStatements(SQLite::Database& db);
  SQLite::Statement insert_ping;
  SQLite::Statement insert_token;
};

struct OutboxStatements {
  explicit OutboxStatements(SQLite::Database& db);
  SQLite::Statement insert_delivery;
  SQLite::Statement update_delivery;
};

struct JobStatements {
  explicit JobStatements(SQLite::Database& db);
  SQLite::Statement save_node_report;
};

// What every operation writes with: the writer's connection, the ping chains that pings
// extend, and each group's prepared statements.
struct PreparedWrites {
  PreparedWrites(SQLite::Database& database, PingChains& ping_chains)
      : db(database),
        chains(ping_chains),
        results(database),
        heartbeat(database),
        outbox(database),
        jobs(database) {}
  SQLite::Database& db;
  PingChains& chains;
  ResultStatements results;
  HeartbeatStatements heartbeat;
  OutboxStatements outbox;
  JobStatements jobs;
};

Status run_op(PreparedWrites& w, const RecordResult& op);
Status run_op(PreparedWrites& w, const SaveState& op);
Status run_op(PreparedWrites& w, const OpenIncident& op);
Status run_op(PreparedWrites& w, const CloseIncident& op);
Status run_op(PreparedWrites& w, const PruneResults& op);
Status run_op(PreparedWrites& w, const RecordPing& op);
Status run_op(PreparedWrites& w, const SaveToken& op);
Status run_op(PreparedWrites& w, const UpdateDelivery& op);
Status run_op(PreparedWrites& w, const SaveApiMonitor& op);
Status run_op(PreparedWrites& w, const DeleteApiMonitor& op);
Status run_op(PreparedWrites& w, const SaveApiWindow& op);
Status run_op(PreparedWrites& w, const DeleteApiWindow& op);
Status run_op(PreparedWrites& w, const SaveApiChannel& op);
Status run_op(PreparedWrites& w, const DeleteApiChannel& op);
Status run_op(PreparedWrites& w, const AddIncidentUpdate& op);
Status run_op(PreparedWrites& w, const SaveNodeReport& op);
Status run_op(PreparedWrites& w, const SaveJobMemo& op);
Status run_op(PreparedWrites& w, const SaveUser& op);
Status run_op(PreparedWrites& w, const DeleteUser& op);
Status run_op(PreparedWrites& w, const SaveApiToken& op);
Status run_op(PreparedWrites& w, const RevokeApiToken& op);
Status run_op(PreparedWrites& w, const SaveSharedKey& op);
Status run_op(PreparedWrites& w, const UseAlertLink& op);
Status run_op(PreparedWrites& w, const AppendAudit& op);
Status run_op(PreparedWrites& w, const PruneAudit& op);

// Used by RecordResult for its outbox rows (write_outbox.cc).
void insert_delivery(PreparedWrites& w, const NewDelivery& d);
Status run_op(PreparedWrites& w, const RecordStoreOutage& op);

// A prepared statement ready for new bindings. One left in an error state by an earlier
// failure still resets cleanly with tryReset; reset() would rethrow that old error.
inline SQLite::Statement& fresh(SQLite::Statement& s) {
  s.tryReset();
  s.clearBindings();
  return s;
}

// Times as stored: ms since the Unix epoch, NULL for none.
inline int64_t ms(SystemTime t) { return to_unix_ms(t); }

inline void bind_optional(SQLite::Statement& s, int index, const std::optional<SystemTime>& t) {
  if (t) {
    s.bind(index, ms(*t));
  } else {
    s.bind(index);
  }
}

inline void bind_optional(SQLite::Statement& s, int index, const std::optional<int64_t>& v) {
  if (v) {
    s.bind(index, *v);
  } else {
    s.bind(index);
  }
}

}  // namespace trainwatch::sqlite
