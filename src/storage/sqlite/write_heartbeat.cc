// Pings and heartbeat tokens: see write_ops.h.
#include <SQLiteCpp/Database.h>

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

// Appends the ping to its monitor's chain (ping_chains.h): prev_id is the chain's head.
Status run_op(PreparedWrites& w, const RecordPing& op) {
  SQLite::Statement& s = fresh(w.heartbeat.insert_ping);
  const PingRecord& r = op.record;
  s.bind(1, r.monitor);
  s.bind(2, ms(r.ping.at));
  s.bind(3, std::string(to_string(r.ping.kind)));
  s.bind(4, r.ping.exit_code);
  s.bind(5, r.ping.source);
  s.bind(6, r.ping.user_agent);
  s.bind(7, r.ping.body);
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
