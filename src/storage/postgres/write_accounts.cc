// Users, their API tokens and the audit log: see write_ops.h. Replicas write these too,
// so each check is part of its statement rather than a read before it.
#include "storage/postgres/write_ops.h"
#include "storage/store_errors.h"
#include "storage/user_identity.h"

namespace trainwatch::postgres {

Status run_op(Tx& tx, const SaveUser& op) {
  const UserRecord& u = op.user;
  const pqxx::result r = tx.exec_params(
      std::string(
          "INSERT INTO users (name, role, password_hash, totp_secret, source, created_ms, oidc_issuer, "
          "oidc_subject) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ") +
          kSaveUserConflict,
      u.name, u.role, u.password_hash, u.totp_secret, u.source, ms(u.created), u.oidc_issuer, u.oidc_subject);
  if (r.affected_rows() == 0) return another_subjects_user(u.name);
  return Ok{};
}

Status run_op(Tx& tx, const DeleteUser& op) {
  tx.exec_params("DELETE FROM api_tokens WHERE owner = $1", op.name);
  if (tx.exec_params("DELETE FROM users WHERE name = $1", op.name).affected_rows() == 0)
    return make_error(store_error::kNotFound, "no user " + op.name);
  return Ok{};
}

Status run_op(Tx& tx, const SaveApiToken& op) {
  const ApiTokenRecord& t = op.token;
  const pqxx::result r = tx.exec_params(
      "INSERT INTO api_tokens (id, name, owner, role, digest, created_ms, expires_ms) "
      "VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING",
      t.id, t.name, t.owner, t.role, t.digest, ms(t.created), ms(t.expires));
  if (r.affected_rows() == 0) return make_error(store_error::kExists, "a token with that id or value exists");
  return Ok{};
}

Status run_op(Tx& tx, const SaveSharedKey& op) {
  tx.exec_params(
      "INSERT INTO shared_keys (name, value, created_ms) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING",
      op.name, op.value, ms(op.at));
  return Ok{};
}

// The primary key decides between replicas: of two uses at once, one inserts.
Status run_op(Tx& tx, const UseAlertLink& op) {
  tx.exec_params("DELETE FROM used_alert_links WHERE expires_ms < $1", ms(op.at));
  if (tx.exec_params("INSERT INTO used_alert_links (id, expires_ms, used_ms) VALUES ($1, $2, $3) "
                     "ON CONFLICT (id) DO NOTHING",
                     op.id, ms(op.expires), ms(op.at))
          .affected_rows() == 0) {
    return make_error(store_error::kExists, "this link was used already");
  }
  return Ok{};
}

Status run_op(Tx& tx, const RevokeApiToken& op) {
  if (tx.exec_params("UPDATE api_tokens SET revoked_ms = $1 WHERE id = $2 AND revoked_ms IS NULL", ms(op.at),
                     op.id)
          .affected_rows() == 0) {
    return make_error(store_error::kNotFound, "no live token " + op.id);
  }
  return Ok{};
}

Status run_op(Tx& tx, const AppendAudit& op) {
  const AuditEntry& e = op.entry;
  tx.exec_params(
      "INSERT INTO audit_log (at_ms, actor, actor_kind, action, source) VALUES ($1, $2, $3, $4, $5)",
      ms(e.at), e.actor, e.actor_kind, e.action, e.source);
  return Ok{};
}

Status run_op(Tx& tx, const PruneAudit& op) {
  tx.exec_params(
      "DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at_ms < $1 ORDER BY at_ms LIMIT $2)",
      ms(op.before), op.max_rows);
  return Ok{};
}

}  // namespace trainwatch::postgres
