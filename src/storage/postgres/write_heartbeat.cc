// Pings and generated tokens: see write_ops.h.
#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "storage/postgres/multi_row.h"
#include "storage/postgres/write_ops.h"

namespace trainwatch::postgres {

Status run_op(Tx& tx, const RecordPing& op) {
  const PingRecord& r = op.record;
  tx.exec_prepared("insert_ping", r.monitor, ms(r.ping.at), std::string(to_string(r.ping.kind)),
                   r.ping.exit_code, r.ping.source, r.ping.user_agent, r.ping.body, r.ping.body_truncated,
                   r.run_ms);
  // Delivered when the batch commits, and only then: the owner never acts on a ping that
  // was not stored.
  if (op.tell_owner) tx.exec_params("SELECT pg_notify($1, $2)", std::string(kNudgeChannel), r.monitor);
  return Ok{};
}

void insert_pings(Tx& tx, const std::vector<const RecordPing*>& pings) {
  std::vector<ParamRow> rows;
  rows.reserve(pings.size());
  for (const RecordPing* p : pings) {
    const PingRecord& r = p->record;
    rows.push_back({r.monitor, integer(ms(r.ping.at)), std::string(to_string(r.ping.kind)),
                    integer(r.ping.exit_code), r.ping.source, r.ping.user_agent, r.ping.body,
                    boolean(r.ping.body_truncated), r.run_ms ? integer(*r.run_ms) : std::nullopt});
  }
  insert_rows(tx,
              "INSERT INTO heartbeat_pings (monitor, at_ms, kind, exit_code, source, user_agent, body, "
              "body_truncated, run_ms)",
              {"", "::bigint", "", "::integer", "", "", "", "::boolean", "::bigint"}, rows);
  std::vector<std::string_view> told;
  for (const RecordPing* p : pings) {
    if (!p->tell_owner || std::find(told.begin(), told.end(), p->record.monitor) != told.end()) continue;
    told.push_back(p->record.monitor);
    tx.exec_params("SELECT pg_notify($1, $2)", std::string(kNudgeChannel), p->record.monitor);
  }
}

Status run_op(Tx& tx, const SaveToken& op) {
  // DO NOTHING: the first generated token stays, so a URL once shown keeps working.
  tx.exec_params(
      "INSERT INTO heartbeat_tokens (monitor, token, created_ms) VALUES ($1, $2, $3) ON CONFLICT (monitor) DO NOTHING",
      op.monitor, op.token,
      ms(std::chrono::system_clock::now()));  // the time is for people reading the table
  return Ok{};
}

}  // namespace trainwatch::postgres
