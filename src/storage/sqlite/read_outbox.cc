// Deliveries (the notification outbox): see reads.h.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <algorithm>
#include <string>

#include "storage/sqlite/reads.h"
#include "storage/sqlite/sqlite_store.h"

namespace trainwatch::sqlite {
namespace {

constexpr const char* kDeliveryColumns =
    "SELECT id, channel, monitor, incident_id, kind, event, created_ms, due_ms, status, attempts, "
    "first_attempt_ms, last_attempt_ms, next_attempt_ms, last_error, http_status, finished_ms FROM deliveries";

Delivery delivery_from_row(SQLite::Statement& row) {
  Delivery d;
  d.id = row.getColumn(0).getInt64();
  d.spec.channel = row.getColumn(1).getString();
  d.spec.monitor = row.getColumn(2).getString();
  if (!row.getColumn(3).isNull()) d.spec.incident_id = row.getColumn(3).getInt64();
  d.spec.kind = row.getColumn(4).getString();
  d.spec.event = row.getColumn(5).getString();
  d.spec.created = from_unix_ms(row.getColumn(6).getInt64());
  d.spec.due = from_unix_ms(row.getColumn(7).getInt64());
  // An unknown status (a newer trainwatch wrote it) reads as failed: never re-sent.
  d.status = delivery_status_from_string(row.getColumn(8).getString()).value_or(DeliveryStatus::kFailed);
  d.attempts = row.getColumn(9).getInt();
  d.first_attempt = optional_time(row.getColumn(10));
  d.last_attempt = optional_time(row.getColumn(11));
  d.next_attempt = optional_time(row.getColumn(12));
  d.last_error = row.getColumn(13).getString();
  d.http_status = row.getColumn(14).getInt();
  d.finished = optional_time(row.getColumn(15));
  return d;
}

}  // namespace

Result<std::vector<Delivery>> read_deliveries(SQLite::Database& db, const DeliveryQuery& query) {
  std::string sql = kDeliveryColumns;
  const char* glue = " WHERE ";
  auto where = [&](const char* condition) {
    sql += glue;
    sql += condition;
    glue = " AND ";
  };
  if (query.status) where("status = ?");
  if (query.channel) where("channel = ?");
  if (query.monitor) where("monitor = ?");
  if (query.after_id) where("id > ?");
  if (query.before_id) where("id < ?");
  sql += query.after_id ? " ORDER BY id ASC LIMIT ?" : " ORDER BY id DESC LIMIT ?";
  SQLite::Statement q(db, sql);
  int index = 1;
  if (query.status) q.bind(index++, std::string(to_string(*query.status)));
  if (query.channel) q.bind(index++, *query.channel);
  if (query.monitor) q.bind(index++, *query.monitor);
  if (query.after_id) q.bind(index++, *query.after_id);
  if (query.before_id) q.bind(index++, *query.before_id);
  q.bind(index, std::clamp(query.limit, 0, SqliteStore::kMaxRowsPerRead));
  std::vector<Delivery> out;
  while (q.executeStep()) out.push_back(delivery_from_row(q));
  return out;
}

}  // namespace trainwatch::sqlite
