// Pings, heartbeat marks and tokens: see reads.h. A monitor's pings are read by walking
// its chain from the head (ping_chains.h), one primary-key lookup per ping.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <algorithm>
#include <string>
#include <utility>

#include "storage/sqlite/reads.h"
#include "storage/sqlite/sqlite_store.h"
#include "storage/store_errors.h"

namespace trainwatch::sqlite {
namespace {

// One ping by id, with the id of its monitor's previous ping last (column 10).
constexpr const char* kPingById =
    "SELECT id, monitor, at_ms, kind, exit_code, source, user_agent, body, body_truncated, run_ms, prev_id "
    "FROM heartbeat_pings WHERE id = ?";

Result<PingRecord> ping_from_row(SQLite::Statement& row) {
  PingRecord r;
  r.id = row.getColumn(0).getInt64();
  r.monitor = row.getColumn(1).getString();
  r.ping.at = from_unix_ms(row.getColumn(2).getInt64());
  const std::string kind = row.getColumn(3).getString();
  auto parsed = ping_kind_from_string(kind);
  if (!parsed)
    return make_error(store_error::kCorrupt,
                      "ping " + std::to_string(r.id) + " has unknown kind '" + kind + "'");
  r.ping.kind = *parsed;
  r.ping.exit_code = row.getColumn(4).getInt();
  r.ping.source = row.getColumn(5).getString();
  r.ping.user_agent = row.getColumn(6).getString();
  r.ping.body = row.getColumn(7).getString();
  r.ping.body_truncated = row.getColumn(8).getInt() != 0;
  if (!row.getColumn(9).isNull()) r.run_ms = row.getColumn(9).getInt64();
  return r;
}

std::optional<int64_t> optional_id(const SQLite::Column& c) {
  if (c.isNull()) return std::nullopt;
  return c.getInt64();
}

// Walks `monitor`'s ping chain newest first from ping `from`, handing each ping to
// `visit` until it returns false or the chain ends (at its first ping, or where
// older pings were deleted).
template <typename Visit>
Status walk_pings(SQLite::Database& db, const std::string& monitor, std::optional<int64_t> from,
                  Visit&& visit) {
  SQLite::Statement q(db, kPingById);
  while (from) {
    q.reset();
    q.bind(1, *from);
    if (!q.executeStep()) break;
    auto record = ping_from_row(q);
    if (!record) return record.error();
    if (record->monitor != monitor) {
      return make_error(store_error::kCorrupt, "ping " + std::to_string(*from) + " is in the chain of '" +
                                                   monitor + "' but belongs to '" + record->monitor + "'");
    }
    from = optional_id(q.getColumn(10));
    if (!visit(std::move(*record))) break;
  }
  return Ok{};
}

}  // namespace

Result<std::vector<PingRecord>> read_pings(SQLite::Database& db, const PingQuery& query,
                                           std::optional<int64_t> head) {
  const size_t limit = static_cast<size_t>(std::clamp(query.limit, 0, SqliteStore::kMaxRowsPerRead));
  std::optional<int64_t> from = head;
  if (query.before_id) {
    // The usual cursor is the last ping of the previous page: go on from the one before
    // it. Any other id: walk from the newest and skip what is not older.
    SQLite::Statement at(db, kPingById);
    at.bind(1, *query.before_id);
    if (at.executeStep() && at.getColumn(1).getString() == query.monitor)
      from = optional_id(at.getColumn(10));
  }
  std::vector<PingRecord> out;
  if (limit == 0) return out;
  Status walked = walk_pings(db, query.monitor, from, [&](PingRecord record) {
    if (query.before_id && record.id >= *query.before_id) return true;
    out.push_back(std::move(record));
    return out.size() < limit;
  });
  if (!walked) return walked.error();
  return out;
}

Result<HeartbeatMarks> read_heartbeat_marks(SQLite::Database& db, const std::string& monitor,
                                            std::optional<int64_t> head) {
  // Newest first until the first finish: usually one or two rows.
  HeartbeatMarks marks;
  int scanned = 0;
  Status walked = walk_pings(db, monitor, head, [&](PingRecord record) {
    if (!marks.last_ping) marks.last_ping = record;
    if (is_finish(record.ping.kind)) {
      marks.last_finish = std::move(record);
      return false;
    }
    if (record.ping.kind == PingKind::kStart && !marks.open_start) marks.open_start = record.ping.at;
    return ++scanned < Store::kMaxMarkScan;
  });
  if (!walked) return walked.error();
  return marks;
}

Result<std::map<std::string, std::string>> read_heartbeat_tokens(SQLite::Database& db) {
  SQLite::Statement q(db, "SELECT monitor, token FROM heartbeat_tokens");
  std::map<std::string, std::string> out;
  while (q.executeStep()) out[q.getColumn(0).getString()] = q.getColumn(1).getString();
  return out;
}

}  // namespace trainwatch::sqlite
