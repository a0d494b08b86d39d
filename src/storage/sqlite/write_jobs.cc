// Node reports and job memos of training jobs: see write_ops.h.
#include <SQLiteCpp/Database.h>

#include "storage/sqlite/write_ops.h"

namespace trainwatch::sqlite {

JobStatements::JobStatements(SQLite::Database& db)
    : save_node_report(db,
                       "INSERT OR REPLACE INTO node_reports (job, node, received_ms, writer, body) "
                       "VALUES (?, ?, ?, ?, ?)") {}

// Replaces the node's row, which takes a new id: the newest report sorts last.
Status run_op(PreparedWrites& w, const SaveNodeReport& op) {
  SQLite::Statement& s = fresh(w.jobs.save_node_report);
  s.bind(1, op.job);
  s.bind(2, op.node);
  s.bind(3, ms(op.received));
  s.bind(4, op.writer);
  s.bind(5, op.body);
  s.exec();
  return Ok{};
}

Status run_op(PreparedWrites& w, const SaveJobMemo& op) {
  SQLite::Statement s(
      w.db,
      "INSERT INTO job_memos (job, saved_ms, body) VALUES (?, ?, ?) ON CONFLICT (job) DO UPDATE "
      "SET saved_ms = excluded.saved_ms, body = excluded.body");
  s.bind(1, op.job);
  s.bind(2, ms(op.saved));
  s.bind(3, op.body);
  s.exec();
  return Ok{};
}

}  // namespace trainwatch::sqlite
