// Pings, heartbeat marks and tokens: see reads.h.
#include <algorithm>

#include "storage/postgres/reads.h"
#include "storage/store_errors.h"

namespace trainwatch::postgres {
namespace {

constexpr const char* kPingColumns =
    "SELECT id, monitor, at_ms, kind, exit_code, source, user_agent, body, body_truncated, run_ms FROM heartbeat_pings";

Result<PingRecord> ping_from_row(const pqxx::row& row) {
  PingRecord r;
  r.id = row[0].as<int64_t>();
  r.monitor = row[1].as<std::string>();
  r.ping.at = from_unix_ms(row[2].as<int64_t>());
  const std::string kind = row[3].as<std::string>();
  auto parsed = ping_kind_from_string(kind);
  if (!parsed)
    return make_error(store_error::kCorrupt,
                      "ping " + std::to_string(r.id) + " has unknown kind '" + kind + "'");
  r.ping.kind = *parsed;
  r.ping.exit_code = row[4].as<int>();
  r.ping.source = row[5].as<std::string>();
  r.ping.user_agent = row[6].as<std::string>();
  r.ping.body = row[7].as<std::string>();
  r.ping.body_truncated = row[8].as<bool>();
  if (!row[9].is_null()) r.run_ms = row[9].as<int64_t>();
  return r;
}

// One page of `monitor`'s pings older than `before_id` (all when unset), newest first.
Result<std::vector<PingRecord>> page(Tx& tx, const std::string& monitor, std::optional<int64_t> before_id,
                                     int limit) {
  std::vector<PingRecord> out;
  for (const pqxx::row& row :
       tx.exec_params(std::string(kPingColumns) +
                          " WHERE monitor = $1 AND ($2::bigint IS NULL OR id < $2) ORDER BY id DESC LIMIT $3",
                      monitor, before_id, limit)) {
    auto record = ping_from_row(row);
    if (!record) return record.error();
    out.push_back(std::move(*record));
  }
  return out;
}

}  // namespace

Result<std::vector<PingRecord>> read_pings(Tx& tx, const PingQuery& query) {
  return page(tx, query.monitor, query.before_id, std::clamp(query.limit, 0, kMaxRowsPerRead));
}

Result<HeartbeatMarks> read_heartbeat_marks(Tx& tx, const std::string& monitor) {
  // Newest first until the first finish, as SqliteStore walks its chain: usually one page.
  constexpr int kPage = 100;
  HeartbeatMarks marks;
  std::optional<int64_t> before;
  for (int scanned = 0; scanned < Store::kMaxMarkScan;) {
    auto rows = page(tx, monitor, before, std::min(kPage, Store::kMaxMarkScan - scanned));
    if (!rows) return rows.error();
    for (PingRecord& record : *rows) {
      if (!marks.last_ping) marks.last_ping = record;
      if (is_finish(record.ping.kind)) {
        marks.last_finish = std::move(record);
        return marks;
      }
      if (record.ping.kind == PingKind::kStart && !marks.open_start) marks.open_start = record.ping.at;
    }
    if (rows->empty()) break;
    scanned += static_cast<int>(rows->size());
    before = rows->back().id;
  }
  return marks;
}

Result<std::map<std::string, std::string>> read_heartbeat_tokens(Tx& tx) {
  std::map<std::string, std::string> out;
  for (const pqxx::row& row : tx.exec("SELECT monitor, token FROM heartbeat_tokens")) {
    out[row[0].as<std::string>()] = row[1].as<std::string>();
  }
  return out;
}

}  // namespace trainwatch::postgres
