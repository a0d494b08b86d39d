// Node reports of jobs: see write_ops.h and store.h (SaveNodeReport).
#include "storage/postgres/write_ops.h"

namespace trainwatch::postgres {

// Each save stamps the row with its transaction's id: node_reports_after reads by it
// (read_jobs.cc), which is what lets a reader never miss a report committed late.
Status run_op(Tx& tx, const SaveNodeReport& op) {
  tx.exec_params(
      "INSERT INTO node_reports (job, node, received_ms, writer, body) VALUES ($1, $2, $3, $4, $5) "
      "ON CONFLICT (job, node) DO UPDATE SET txid = pg_current_xact_id(), received_ms = excluded.received_ms, "
      "writer = excluded.writer, body = excluded.body "
      // A job's two holders both write its nodes' states (the standby on a clean stop, or
      // once it owns the job); an older state never replaces a newer one.
      "WHERE node_reports.received_ms <= excluded.received_ms",
      op.job, op.node, ms(op.received), op.writer, op.body);
  return Ok{};
}

Status run_op(Tx& tx, const SaveJobMemo& op) {
  tx.exec_params(
      "INSERT INTO job_memos (job, saved_ms, body) VALUES ($1, $2, $3) "
      "ON CONFLICT (job) DO UPDATE SET saved_ms = excluded.saved_ms, body = excluded.body",
      op.job, ms(op.saved), op.body);
  return Ok{};
}

}  // namespace trainwatch::postgres
