// Monitors, maintenance windows and notification channels created through the API: see
// write_ops.h.
#include "storage/postgres/write_ops.h"

namespace trainwatch::postgres {

Status run_op(Tx& tx, const SaveApiMonitor& op) {
  tx.exec_params(
      "INSERT INTO api_monitors AS m (name, spec_json) VALUES ($1, $2) "
      "ON CONFLICT (name) DO UPDATE SET spec_json = excluded.spec_json, version = m.version + 1",
      op.name, op.spec_json);
  return Ok{};
}

Status run_op(Tx& tx, const DeleteApiMonitor& op) {
  tx.exec_params("DELETE FROM api_monitors WHERE name = $1", op.name);
  return Ok{};
}

Status run_op(Tx& tx, const SaveApiWindow& op) {
  tx.exec_params("INSERT INTO api_maintenance (id, spec_json, created_ms) VALUES ($1, $2, $3)", op.id,
                 op.spec_json, ms(op.created));
  // Remembered beyond the row's life: next_api_window_id never hands this id out again.
  tx.exec_params(
      "INSERT INTO id_high_water AS h (name, high) VALUES ('api_maintenance', $1) "
      "ON CONFLICT (name) DO UPDATE SET high = GREATEST(h.high, excluded.high)",
      op.id);
  return Ok{};
}

Status run_op(Tx& tx, const DeleteApiWindow& op) {
  tx.exec_params("DELETE FROM api_maintenance WHERE id = $1", op.id);
  return Ok{};
}

Status run_op(Tx& tx, const SaveApiChannel& op) {
  tx.exec_params(
      "INSERT INTO api_channels (name, spec_json) VALUES ($1, $2) "
      "ON CONFLICT (name) DO UPDATE SET spec_json = excluded.spec_json",
      op.name, op.spec_json);
  return Ok{};
}

Status run_op(Tx& tx, const DeleteApiChannel& op) {
  tx.exec_params("DELETE FROM api_channels WHERE name = $1", op.name);
  return Ok{};
}

}  // namespace trainwatch::postgres
