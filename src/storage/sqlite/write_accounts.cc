// Users, their API tokens and the audit log: see write_ops.h.
#include <SQLiteCpp/Database.h>

#include "storage/sqlite/write_ops.h"
#include "storage/store_errors.h"
#include "storage/user_identity.h"

namespace trainwatch::sqlite {

Status run_op(PreparedWrites& w, const SaveUser& op) {
  const UserRecord& u = op.user;
  SQLite::Statement s(w.db,
                      std::string("INSERT INTO users (name, role, password_hash, totp_secret, source, "
                                  "created_ms, oidc_issuer, oidc_subject) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ") +
                          kSaveUserConflict);
  s.bind(1, u.name);
  s.bind(2, u.role);
  s.bind(3, u.password_hash);
  s.bind(4, u.totp_secret);
  s.bind(5, u.source);
  s.bind(6, ms(u.created));
  s.bind(7, u.oidc_issuer);
  s.bind(8, u.oidc_subject);
  if (s.exec() == 0) return another_subjects_user(u.name);
  return Ok{};
}

Status run_op(PreparedWrites& w, const DeleteUser& op) {
  SQLite::Statement tokens(w.db, "DELETE FROM api_tokens WHERE owner = ?");
  tokens.bind(1, op.name);
  tokens.exec();
  SQLite::Statement s(w.db, "DELETE FROM users WHERE name = ?");
  s.bind(1, op.name);
  if (s.exec() == 0) return make_error(store_error::kNotFound, "no user " + op.name);
  return Ok{};
}

Status run_op(PreparedWrites& w, const SaveApiToken& op) {
  const ApiTokenRecord& t = op.token;
  // One writer: nothing can insert between this read and the insert.
  SQLite::Statement taken(w.db, "SELECT 1 FROM api_tokens WHERE id = ? OR digest = ?");
  taken.bind(1, t.id);
  taken.bind(2, t.digest);
  if (taken.executeStep()) return make_error(store_error::kExists, "a token with that id or value exists");
  SQLite::Statement s(
      w.db,
      "INSERT INTO api_tokens (id, name, owner, role, digest, created_ms, expires_ms, revoked_ms) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, NULL)");
  s.bind(1, t.id);
  s.bind(2, t.name);
  s.bind(3, t.owner);
  s.bind(4, t.role);
  s.bind(5, t.digest);
  s.bind(6, ms(t.created));
  bind_optional(s, 7, t.expires);
  s.exec();
  return Ok{};
}

Status run_op(PreparedWrites& w, const SaveSharedKey& op) {
  SQLite::Statement s(
      w.db,
      "INSERT INTO shared_keys (name, value, created_ms) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING");
  s.bind(1, op.name);
  s.bind(2, op.value);
  s.bind(3, ms(op.at));
  s.exec();
  return Ok{};
}

Status run_op(PreparedWrites& w, const UseAlertLink& op) {
  SQLite::Statement prune(w.db, "DELETE FROM used_alert_links WHERE expires_ms < ?");
  prune.bind(1, ms(op.at));
  prune.exec();
  SQLite::Statement s(
      w.db,
      "INSERT INTO used_alert_links (id, expires_ms, used_ms) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING");
  s.bind(1, op.id);
  s.bind(2, ms(op.expires));
  s.bind(3, ms(op.at));
  if (s.exec() == 0) return make_error(store_error::kExists, "this link was used already");
  return Ok{};
}

Status run_op(PreparedWrites& w, const RevokeApiToken& op) {
  SQLite::Statement s(w.db, "UPDATE api_tokens SET revoked_ms = ? WHERE id = ? AND revoked_ms IS NULL");
  s.bind(1, ms(op.at));
  s.bind(2, op.id);
  if (s.exec() == 0) return make_error(store_error::kNotFound, "no live token " + op.id);
  return Ok{};
}

Status run_op(PreparedWrites& w, const AppendAudit& op) {
  const AuditEntry& e = op.entry;
  SQLite::Statement s(
      w.db, "INSERT INTO audit_log (at_ms, actor, actor_kind, action, source) VALUES (?, ?, ?, ?, ?)");
  s.bind(1, ms(e.at));
  s.bind(2, e.actor);
  s.bind(3, e.actor_kind);
  s.bind(4, e.action);
  s.bind(5, e.source);
  s.exec();
  return Ok{};
}

Status run_op(PreparedWrites& w, const PruneAudit& op) {
  SQLite::Statement s(w.db,
                      "DELETE FROM audit_log WHERE id IN "
                      "(SELECT id FROM audit_log WHERE at_ms < ? ORDER BY at_ms LIMIT ?)");
  s.bind(1, ms(op.before));
  s.bind(2, op.max_rows);
  s.exec();
  return Ok{};
}

}  // namespace trainwatch::sqlite
