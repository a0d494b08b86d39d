// Node reports and job memos of training jobs: see reads.h.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include "storage/sqlite/reads.h"

namespace trainwatch::sqlite {

Result<NodeReportFeed> read_node_reports_after(SQLite::Database& db, int64_t cursor) {
  SQLite::Statement q(db,
                      "SELECT id, job, node, received_ms, writer, body FROM node_reports WHERE id >= ? "
                      "ORDER BY id LIMIT ?");
  q.bind(1, cursor);
  q.bind(2, Store::kMaxNodeReportsPerRead);
  NodeReportFeed feed{{}, cursor};
  while (q.executeStep()) {
    feed.reports.push_back(
        StoredNodeReport{q.getColumn(1).getString(), q.getColumn(2).getString(), q.getColumn(5).getString(),
                         from_unix_ms(q.getColumn(3).getInt64()), q.getColumn(4).getString()});
    feed.next = q.getColumn(0).getInt64() + 1;
  }
  return feed;
}

Result<std::vector<StoredJobMemo>> read_job_memos(SQLite::Database& db) {
  SQLite::Statement q(db, "SELECT job, body, saved_ms FROM job_memos ORDER BY saved_ms DESC LIMIT ?");
  q.bind(1, Store::kMaxJobMemos);
  std::vector<StoredJobMemo> out;
  while (q.executeStep()) {
    out.push_back(StoredJobMemo{q.getColumn(0).getString(), q.getColumn(1).getString(),
                                from_unix_ms(q.getColumn(2).getInt64())});
  }
  return out;
}

}  // namespace trainwatch::sqlite
