// Pings and heartbeat tokens: see write_ops.h.
#include <SQLiteCpp/Database.h>

#include <array>
#include <chrono>
#include <string>

#include "storage/sqlite/ping_chains.h"
#include "storage/sqlite/write_ops.h"

namespace trainwatch::sqlite {

HeartbeatStatements::HeartbeatStatements(SQLite::Database& db)
    : insert_ping(db,
                  "INSERT INTO heartbeat_pings (monitor, at_ms, kind, exit_code, source, user_agent, body, "
                  "body_truncated, run_ms, prev_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
      // DO NOTHING: the first generated token stays, so a URL once shown keeps working.
      insert_token(db,
                   "INSERT INTO heartbeat_tokens (monitor, token, created_ms) VALUES (?, ?, ?) "
                   "ON CONFLICT (monitor) DO NOTHING") {}

namespace {

// The kind's name in a string that lives as long as the process, so it binds without a copy.
const std::string& kind_name(PingKind kind) {
  static const std::array<std::string, 5> kNames = {
      std::string(to_string(PingKind::kSuccess)), std::string(to_string(PingKind::kStart)),
      std::string(to_string(PingKind::kFail)), std::string(to_string(PingKind::kLog)),
      std::string(to_string(PingKind::kExitCode))};
  return kNames.at(static_cast<size_t>(kind));
}

}  // namespace

// Appends the ping to its monitor's chain (ping_chains.h): prev_id is the chain's head.
Status run_op(PreparedWrites& w, const RecordPing& op) {
  SQLite::Statement& s = fresh(w.heartbeat.insert_ping);
  const PingRecord& r = op.record;
  // Text bound without SQLite's copy (a malloc and a memcpy per column, five per ping):
  // the record outlives the step, and the statement's next use rebinds every parameter
  // before it steps again.
  s.bindNoCopy(1, r.monitor);
  s.bind(2, ms(r.ping.at));
  s.bindNoCopy(3, kind_name(r.ping.kind));
  s.bind(4, r.ping.exit_code);
  s.bindNoCopy(5, r.ping.source);
  s.bindNoCopy(6, r.ping.user_agent);
  s.bindNoCopy(7, r.ping.body);
  s.bind(8, r.ping.body_truncated ? 1 : 0);
  bind_optional(s, 9, r.run_ms);
  bind_optional(s, 10, w.chains.prev(r.monitor));
  s.exec();
  w.chains.append(r.monitor, w.db.getLastInsertRowid());
  return Ok{};
}

Status run_op(PreparedWrites& w, const SaveToken& op) {
  SQLite::Statement& s = fresh(w.heartbeat.insert_token);
  s.bind(1, op.monitor);
  s.bind(2, op.token);
  s.bind(3, ms(std::chrono::system_clock::now()));  // for people reading the table only
  s.exec();
  return Ok{};
}

}  // namespace trainwatch::sqlite
