// Pings and generated tokens: see write_ops.h.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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
  // 9 parameters a row; PostgreSQL takes at most 65,535 in one statement.
  constexpr size_t kRowsPerStatement = 1'000;
  for (size_t first = 0; first < pings.size(); first += kRowsPerStatement) {
    const size_t last = std::min(pings.size(), first + kRowsPerStatement);
    std::string sql =
        "INSERT INTO heartbeat_pings (monitor, at_ms, kind, exit_code, source, user_agent, body, body_truncated, "
        "run_ms) VALUES ";
    std::vector<std::optional<std::string>> params;
    params.reserve((last - first) * 9);
    for (size_t i = first; i < last; ++i) {
      const size_t n = params.size();
      sql +=
          fmt::format("{}(${}, ${}::bigint, ${}, ${}::integer, ${}, ${}, ${}, ${}::boolean, ${}::bigint)",
                      i == first ? "" : ", ", n + 1, n + 2, n + 3, n + 4, n + 5, n + 6, n + 7, n + 8, n + 9);
      const PingRecord& r = pings[i]->record;
      params.emplace_back(r.monitor);
      params.emplace_back(std::to_string(ms(r.ping.at)));
      params.emplace_back(std::string(to_string(r.ping.kind)));
      params.emplace_back(std::to_string(r.ping.exit_code));
      params.emplace_back(r.ping.source);
      params.emplace_back(r.ping.user_agent);
      params.emplace_back(r.ping.body);
      params.emplace_back(r.ping.body_truncated ? "true" : "false");
      params.emplace_back(r.run_ms ? std::optional<std::string>(std::to_string(*r.run_ms)) : std::nullopt);
    }
    tx.exec_params(sql, pqxx::prepare::make_dynamic_params(params));
  }
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
