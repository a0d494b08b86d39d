#include "storage/postgres/member_registry.h"

#include <pqxx/pqxx>

#include <algorithm>
#include <chrono>
#include <utility>

#include "storage/postgres/connection.h"

namespace trainwatch::postgres {

// Collects the payloads (monitor names) of the nudges the connection receives.
class PgMemberRegistry::NudgeListener final : public pqxx::notification_receiver {
 public:
  explicit NudgeListener(pqxx::connection_base& conn)
      : notification_receiver(conn, std::string(kNudgeChannel)) {}
  void operator()(const std::string& payload, int /*backend_pid*/) override {
    // Bounded: a flood between two reads keeps one nudge per monitor, and no more than
    // the cap (the owner reads the rest at their deadlines).
    if (received.size() < kMaxNudges &&
        std::find(received.begin(), received.end(), payload) == received.end())
      received.push_back(payload);
  }
  static constexpr size_t kMaxNudges = 10'000;
  std::vector<std::string> received;
};

PgMemberRegistry::PgMemberRegistry(std::string url) : url_(std::move(url)) {}

PgMemberRegistry::~PgMemberRegistry() { drop_connection(); }

Status PgMemberRegistry::ensure_connected() {
  if (conn_ && conn_->is_open()) return Ok{};
  drop_connection();
  auto conn = connect(url_);
  if (!conn) return conn.error();
  try {
    listener_ = std::make_unique<NudgeListener>(**conn);  // LISTEN
  } catch (const std::exception& e) {
    return make_error("store.unavailable", "members: cannot listen for nudges: " + scrub(e.what(), url_));
  }
  conn_ = std::move(*conn);
  return Ok{};
}

void PgMemberRegistry::drop_connection() {
  listener_.reset();
  conn_.reset();
}

Result<std::vector<std::string>> PgMemberRegistry::await_nudges(Millis timeout) {
  if (!conn_ || !listener_) return make_error("store.unavailable", "members: not connected");
  try {
    if (listener_->received.empty()) {
      const auto us = std::chrono::duration_cast<std::chrono::microseconds>(timeout).count();
      conn_->await_notification(static_cast<long>(us / 1'000'000), static_cast<long>(us % 1'000'000));
    }
    return std::exchange(listener_->received, {});
  } catch (const std::exception& e) {
    drop_connection();
    return make_error("store.unavailable", "members: " + scrub(e.what(), url_));
  }
}

Result<BeatReply> PgMemberRegistry::beat(const MemberRow& self, bool rejoin) {
  if (Status connected = ensure_connected(); !connected) return connected.error();
  try {
    pqxx::work tx(*conn_);
    BeatReply reply;
    // The database's clock, read first and on its own, so that the round trip around it
    // (a (re)connect above may have taken seconds) is as short as it can be.
    const auto asked = std::chrono::steady_clock::now();
    const auto database_us =
        tx.exec1("SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint")[0].as<int64_t>();
    const auto answered = std::chrono::steady_clock::now();
    tx.exec_params(
        "INSERT INTO members (id, label, config, address) VALUES ($1, $2, $3, $5) "
        "ON CONFLICT (id) DO UPDATE SET seen_at = now(), label = excluded.label, config = excluded.config, "
        "address = excluded.address, joined_at = CASE WHEN $4 THEN now() ELSE members.joined_at END",
        self.id, self.label, self.config, rejoin, self.address);
    tx.exec_params("DELETE FROM members WHERE seen_at < now() - make_interval(secs => $1)",
                   static_cast<double>(kForgetAfter.count()) / 1000.0);
    for (const pqxx::row& row :
         tx.exec("SELECT id, label, config, (extract(epoch FROM now() - joined_at) * 1000)::bigint, "
                 "(extract(epoch FROM now() - seen_at) * 1000)::bigint, address FROM members ORDER BY id")) {
      reply.members.push_back({row[0].as<std::string>(), row[1].as<std::string>(), row[2].as<std::string>(),
                               Millis(row[3].as<int64_t>()), Millis(row[4].as<int64_t>()),
                               row[5].as<std::string>()});
    }
    tx.commit();
    const auto half_trip = std::chrono::duration_cast<std::chrono::microseconds>(answered - asked) / 2;
    const auto since_read = std::chrono::steady_clock::now() - (asked + half_trip);
    reply.database_now = SystemTime(std::chrono::microseconds(database_us)) +
                         std::chrono::duration_cast<SystemTime::duration>(since_read);
    reply.uncertainty = half_trip;
    return reply;
  } catch (const std::exception& e) {
    const FailureKind kind = classify(e);
    if (kind.connection_lost) drop_connection();
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
    drop_connection();
    return make_error("store.write", "members: " + scrub(e.what(), url_));
  }
}

}  // namespace trainwatch::postgres
