// Node reports of jobs: see reads.h and store.h (node_reports_after).
#include "storage/postgres/reads.h"

#include <string>

namespace trainwatch::postgres {

// The cursor is a transaction id. Replicas save reports concurrently, so an order of
// saving (a sequence) is not the order of commits: a reader that went past a number could
// miss a row committed later with a smaller one. A transaction id below this snapshot's
// xmin belongs to a transaction that has finished, so every row stamped with one is as
// final as it will be; the page stops there, and the next page starts there.
Result<NodeReportFeed> read_node_reports_after(Tx& tx, int64_t cursor, int limit) {
  const auto horizon =
      tx.exec1("SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint")[0].as<int64_t>();
  NodeReportFeed feed{{}, horizon};
  const pqxx::result rows = tx.exec_params(
      "SELECT job, node, received_ms, writer, body, txid::text::bigint FROM node_reports "
      "WHERE txid >= $1::text::xid8 AND txid < $2::text::xid8 ORDER BY txid, received_ms LIMIT $3",
      std::to_string(cursor), std::to_string(horizon), limit);
  for (const pqxx::row& row : rows) {
    feed.reports.push_back(StoredNodeReport{row[0].as<std::string>(), row[1].as<std::string>(),
                                            row[4].as<std::string>(), from_unix_ms(row[2].as<int64_t>()),
                                            row[3].as<std::string>()});
  }
  // A full page may have ended inside one transaction's rows: read that one again.
  if (static_cast<int>(rows.size()) == limit) feed.next = rows.back()[5].as<int64_t>();
  return feed;
}

Result<std::vector<StoredJobMemo>> read_job_memos(Tx& tx, int limit) {
  std::vector<StoredJobMemo> out;
  for (const pqxx::row& row :
       tx.exec_params("SELECT job, body, saved_ms FROM job_memos ORDER BY saved_ms DESC LIMIT $1", limit)) {
    out.push_back(StoredJobMemo{row[0].as<std::string>(), row[1].as<std::string>(),
                                from_unix_ms(row[2].as<int64_t>())});
  }
  return out;
}

}  // namespace trainwatch::postgres
