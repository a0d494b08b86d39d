// Users, their API tokens and the audit log: see reads.h.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include "storage/sqlite/reads.h"

namespace trainwatch::sqlite {

Result<std::vector<UserRecord>> read_users(SQLite::Database& db, int limit) {
  SQLite::Statement q(db,
                      "SELECT name, role, password_hash, totp_secret, source, created_ms, oidc_issuer, "
                      "oidc_subject FROM users ORDER BY name LIMIT ?");
  q.bind(1, limit);
  std::vector<UserRecord> out;
  while (q.executeStep()) {
    out.push_back(UserRecord{q.getColumn(0).getString(), q.getColumn(1).getString(),
                             q.getColumn(2).getString(), q.getColumn(3).getString(),
                             q.getColumn(4).getString(), from_unix_ms(q.getColumn(5).getInt64()),
                             q.getColumn(6).getString(), q.getColumn(7).getString()});
  }
  return out;
}

Result<std::vector<ApiTokenRecord>> read_api_tokens(SQLite::Database& db, int limit) {
  SQLite::Statement q(
      db,
      "SELECT id, name, owner, role, digest, created_ms, expires_ms, revoked_ms FROM api_tokens "
      "ORDER BY created_ms DESC, id LIMIT ?");
  q.bind(1, limit);
  std::vector<ApiTokenRecord> out;
  while (q.executeStep()) {
    out.push_back(ApiTokenRecord{q.getColumn(0).getString(), q.getColumn(1).getString(),
                                 q.getColumn(2).getString(), q.getColumn(3).getString(),
                                 q.getColumn(4).getString(), from_unix_ms(q.getColumn(5).getInt64()),
                                 optional_time(q.getColumn(6)), optional_time(q.getColumn(7))});
  }
  return out;
}

Result<std::vector<AuditEntry>> read_audit(SQLite::Database& db, const AuditQuery& query) {
  SQLite::Statement q(db,
                      "SELECT id, at_ms, actor, actor_kind, action, source FROM audit_log "
                      "WHERE (? = 0 OR id < ?) ORDER BY id DESC LIMIT ?");
  q.bind(1, query.before_id);
  q.bind(2, query.before_id);
  q.bind(3, std::clamp(query.limit, 1, AuditQuery::kMaxAuditPage));
  std::vector<AuditEntry> out;
  while (q.executeStep()) {
    out.push_back(AuditEntry{q.getColumn(0).getInt64(), from_unix_ms(q.getColumn(1).getInt64()),
                             q.getColumn(2).getString(), q.getColumn(3).getString(),
                             q.getColumn(4).getString(), q.getColumn(5).getString()});
  }
  return out;
}

Result<std::optional<std::string>> read_shared_key(SQLite::Database& db, const std::string& name) {
  SQLite::Statement q(db, "SELECT value FROM shared_keys WHERE name = ?");
  q.bind(1, name);
  if (!q.executeStep()) return std::optional<std::string>();
  return std::optional<std::string>(q.getColumn(0).getString());
}

Result<bool> read_alert_link_used(SQLite::Database& db, const std::string& id) {
  SQLite::Statement q(db, "SELECT 1 FROM used_alert_links WHERE id = ?");
  q.bind(1, id);
  return q.executeStep();
}

}  // namespace trainwatch::sqlite
