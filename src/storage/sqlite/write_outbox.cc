// Deliveries (the notification outbox): see write_ops.h.
#include <SQLiteCpp/Database.h>

#include <string>

#include "storage/sqlite/write_ops.h"
#include "storage/store_errors.h"

namespace trainwatch::sqlite {

OutboxStatements::OutboxStatements(SQLite::Database& db)
    : insert_delivery(
          db,
          // A reminder once per incident, channel and due time (store.h, NewDelivery).
          "INSERT INTO deliveries (channel, monitor, incident_id, kind, event, created_ms, due_ms) "
          "SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7 WHERE ?4 <> 'reminder' OR NOT EXISTS (SELECT 1 FROM deliveries "
          "WHERE monitor = ?2 AND incident_id = ?3 AND channel = ?1 AND kind = 'reminder' AND due_ms = ?7)"),
      update_delivery(
          db,
          "UPDATE deliveries SET status = ?, attempts = ?, first_attempt_ms = ?, last_attempt_ms = ?, "
          "next_attempt_ms = ?, last_error = ?, http_status = ?, finished_ms = ? WHERE id = ?") {}

// As PostgreSQL's (store.h): one process writes here, so an outage it saw is new; the
// check keeps the two stores alike.
Status run_op(PreparedWrites& w, const RecordStoreOutage& op) {
  for (const NewDelivery& d : op.outbox) {
    SQLite::Statement said(w.db,
                           "SELECT 1 FROM deliveries WHERE monitor = ? AND channel = ? AND kind = ? AND "
                           "created_ms >= ? LIMIT 1");
    said.bind(1, d.monitor);
    said.bind(2, d.channel);
    said.bind(3, d.kind);
    said.bind(4, ms(op.from));
    if (!said.executeStep()) insert_delivery(w, d);
  }
  return Ok{};
}

void insert_delivery(PreparedWrites& w, const NewDelivery& d) {
  SQLite::Statement& q = fresh(w.outbox.insert_delivery);
  q.bind(1, d.channel);
  q.bind(2, d.monitor);
  bind_optional(q, 3, d.incident_id);
  q.bind(4, d.kind);
  q.bind(5, d.event);
  q.bind(6, ms(d.created));
  q.bind(7, ms(d.due));
  q.exec();
}

Status run_op(PreparedWrites& w, const UpdateDelivery& op) {
  SQLite::Statement& s = fresh(w.outbox.update_delivery);
  s.bind(1, std::string(to_string(op.status)));
  s.bind(2, op.attempts);
  bind_optional(s, 3, op.first_attempt);
  bind_optional(s, 4, op.last_attempt);
  bind_optional(s, 5, op.next_attempt);
  s.bind(6, op.last_error);
  s.bind(7, op.http_status);
  bind_optional(s, 8, op.finished);
  s.bind(9, op.id);
  if (s.exec() == 0) {
    return make_error(store_error::kNotFound,
                      "cannot update delivery " + std::to_string(op.id) + ": no such delivery");
  }
  return Ok{};
}

}  // namespace trainwatch::sqlite
