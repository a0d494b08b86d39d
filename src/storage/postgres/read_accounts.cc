// Users, their API tokens and the audit log: see reads.h.
#include <algorithm>

#include "storage/postgres/reads.h"

namespace trainwatch::postgres {

Result<std::vector<UserRecord>> read_users(Tx& tx, int limit) {
  std::vector<UserRecord> out;
  for (const pqxx::row& row :
       tx.exec_params("SELECT name, role, password_hash, totp_secret, source, created_ms, oidc_issuer, "
                      "oidc_subject FROM users ORDER BY name LIMIT $1",
                      limit)) {
    out.push_back(UserRecord{row[0].as<std::string>(), row[1].as<std::string>(), row[2].as<std::string>(),
                             row[3].as<std::string>(), row[4].as<std::string>(),
                             from_unix_ms(row[5].as<int64_t>()), row[6].as<std::string>(),
                             row[7].as<std::string>()});
  }
  return out;
}

Result<std::vector<ApiTokenRecord>> read_api_tokens(Tx& tx, int limit) {
  std::vector<ApiTokenRecord> out;
  for (const pqxx::row& row : tx.exec_params(
           "SELECT id, name, owner, role, digest, created_ms, expires_ms, revoked_ms FROM api_tokens "
           "ORDER BY created_ms DESC, id LIMIT $1",
           limit)) {
    out.push_back(ApiTokenRecord{row[0].as<std::string>(), row[1].as<std::string>(), row[2].as<std::string>(),
                                 row[3].as<std::string>(), row[4].as<std::string>(),
                                 from_unix_ms(row[5].as<int64_t>()), optional_time(row[6]),
                                 optional_time(row[7])});
  }
  return out;
}

Result<std::vector<AuditEntry>> read_audit(Tx& tx, const AuditQuery& query) {
  std::vector<AuditEntry> out;
  for (const pqxx::row& row :
       tx.exec_params("SELECT id, at_ms, actor, actor_kind, action, source FROM audit_log "
                      "WHERE ($1 = 0 OR id < $1) ORDER BY id DESC LIMIT $2",
                      query.before_id, std::clamp(query.limit, 1, AuditQuery::kMaxAuditPage))) {
    out.push_back(AuditEntry{row[0].as<int64_t>(), from_unix_ms(row[1].as<int64_t>()),
                             row[2].as<std::string>(), row[3].as<std::string>(), row[4].as<std::string>(),
                             row[5].as<std::string>()});
  }
  return out;
}

Result<std::optional<std::string>> read_shared_key(Tx& tx, const std::string& name) {
  const pqxx::result r = tx.exec_params("SELECT value FROM shared_keys WHERE name = $1", name);
  if (r.empty()) return std::optional<std::string>();
  return std::optional<std::string>(r[0][0].as<std::string>());
}

Result<bool> read_alert_link_used(Tx& tx, const std::string& id) {
  return !tx.exec_params("SELECT 1 FROM used_alert_links WHERE id = $1", id).empty();
}

}  // namespace trainwatch::postgres
