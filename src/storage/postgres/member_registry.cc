#include "storage/postgres/member_registry.h"

#include <pqxx/pqxx>

#include "storage/postgres/connection.h"

namespace trainwatch::postgres {

Status PgMemberRegistry::ensure_connected() {
  if (conn_ && conn_->is_open()) return Ok{};
  conn_.reset();
  auto conn = connect(url_);
  if (!conn) return conn.error();
  conn_ = std::move(*conn);
  return Ok{};
}

Result<std::vector<MemberRow>> PgMemberRegistry::beat(const MemberRow& self) {
  if (Status connected = ensure_connected(); !connected) return connected.error();
  try {
    pqxx::work tx(*conn_);
    tx.exec_params(
        "INSERT INTO members (id, label, config) VALUES ($1, $2, $3) "
        "ON CONFLICT (id) DO UPDATE SET seen_at = now(), label = excluded.label, config = excluded.config",
        self.id, self.label, self.config);
    tx.exec_params("DELETE FROM members WHERE seen_at < now() - make_interval(secs => $1)",
                   static_cast<double>(kForgetAfter.count()) / 1000.0);
    std::vector<MemberRow> rows;
    for (const pqxx::row& row :
         tx.exec("SELECT id, label, config, (extract(epoch FROM now() - joined_at) * 1000)::bigint, "
                 "(extract(epoch FROM now() - seen_at) * 1000)::bigint FROM members ORDER BY id")) {
      rows.push_back({row[0].as<std::string>(), row[1].as<std::string>(), row[2].as<std::string>(),
                      Millis(row[3].as<int64_t>()), Millis(row[4].as<int64_t>())});
    }
    tx.commit();
    return rows;
  } catch (const std::exception& e) {
    const FailureKind kind = classify(e);
    if (kind.connection_lost) conn_.reset();
    return make_error(kind.connection_lost ? "store.unavailable" : "store.write",
                      "members: " + scrub(e.what(), url_));
  }
}

Status PgMemberRegistry::leave(const std::string& id) {
  if (Status connected = ensure_connected(); !connected) return connected;
  try {
    pqxx::work tx(*conn_);
    tx.exec_params("DELETE FROM members WHERE id = $1", id);
    tx.commit();
    return Ok{};
  } catch (const std::exception& e) {
    conn_.reset();
    return make_error("store.write", "members: " + scrub(e.what(), url_));
  }
}

}  // namespace trainwatch::postgres
