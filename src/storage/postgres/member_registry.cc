#include "storage/postgres/member_registry.h"

#include <fmt/format.h>
#include <pqxx/pqxx>

#include <algorithm>
#include <chrono>
#include <utility>

#include "storage/postgres/connection.h"
#include "storage/store_errors.h"

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

PgMemberRegistry::PgMemberRegistry(std::string url, DatabaseSessionLimits limits)
    : url_(std::move(url)), limits_(limits) {}

PgMemberRegistry::~PgMemberRegistry() { drop_connection(); }

Status PgMemberRegistry::ensure_connected() {
  if (conn_ && conn_->is_open()) return Ok{};
  drop_connection();
  auto conn = connect(url_, SessionRole::kMembers, limits_);
  if (!conn) return conn.error();
  try {
    listener_ = std::make_unique<NudgeListener>(**conn);  // LISTEN
  } catch (const std::exception& e) {
    return make_error(store_error::kUnavailable,
                      "members: cannot listen for nudges: " + scrub(e.what(), url_));
  }
  conn_ = std::move(*conn);
  return Ok{};
}

void PgMemberRegistry::drop_connection() {
  listener_.reset();
  conn_.reset();
}

Result<std::vector<std::string>> PgMemberRegistry::await_nudges(Millis timeout) {
  if (!conn_ || !listener_) return make_error(store_error::kUnavailable, "members: not connected");
  try {
    if (listener_->received.empty()) {
      const auto us = std::chrono::duration_cast<std::chrono::microseconds>(timeout).count();
      conn_->await_notification(static_cast<long>(us / 1'000'000), static_cast<long>(us % 1'000'000));
    }
    return std::exchange(listener_->received, {});
  } catch (const std::exception& e) {
    drop_connection();
    return make_error(store_error::kUnavailable, "members: " + scrub(e.what(), url_));
  }
}

Result<BeatReply> PgMemberRegistry::beat(const MemberRow& self, bool rejoin) {
  if (Status connected = ensure_connected(); !connected) return connected.error();
  try {
    BeatReply reply;
    // One round trip, one implicit transaction (a simple query of several statements): a
    // slow link costs a beat its latency once, not six times (membership.h, Fitness). The
    // database's clock is read at the end of it; half the round trip is its error.
    const std::string sql = fmt::format(
        "INSERT INTO members (id, label, config, address, fit) VALUES ({}, {}, {}, {}, {}) "
        "ON CONFLICT (id) DO UPDATE SET seen_at = now(), label = excluded.label, config = excluded.config, "
        "address = excluded.address, fit = excluded.fit, "
        "joined_at = CASE WHEN {} THEN now() ELSE members.joined_at END; "
        "DELETE FROM members WHERE seen_at < now() - make_interval(secs => {}); "
        "SELECT id, label, config, (extract(epoch FROM now() - joined_at) * 1000)::bigint, "
        "(extract(epoch FROM now() - seen_at) * 1000)::bigint, address, fit, "
        "(extract(epoch FROM clock_timestamp()) * 1000000)::bigint FROM members ORDER BY id",
        conn_->quote(self.id), conn_->quote(self.label), conn_->quote(self.config),
        conn_->quote(self.address), self.fit ? "true" : "false", rejoin ? "true" : "false",
        kForgetAfter.count() / 1000);
    pqxx::nontransaction tx(*conn_);
    const auto asked = std::chrono::steady_clock::now();
    const pqxx::result rows = tx.exec(sql);
    const auto answered = std::chrono::steady_clock::now();
    int64_t database_us = 0;
    for (const pqxx::row& row : rows) {
      reply.members.push_back({row[0].as<std::string>(), row[1].as<std::string>(), row[2].as<std::string>(),
                               Millis(row[3].as<int64_t>()), Millis(row[4].as<int64_t>()),
                               row[5].as<std::string>(), row[6].as<bool>()});
      database_us = row[7].as<int64_t>();  // its own row is there: it was just written
    }
    const auto half_trip = std::chrono::duration_cast<std::chrono::microseconds>(answered - asked) / 2;
    const auto since_read = std::chrono::steady_clock::now() - (asked + half_trip);
    reply.database_now = SystemTime(std::chrono::microseconds(database_us)) +
                         std::chrono::duration_cast<SystemTime::duration>(since_read);
    reply.uncertainty = half_trip;
    return reply;
  } catch (const std::exception& e) {
    const FailureKind kind = classify(e);
    if (kind.connection_lost) drop_connection();
    return make_error(kind.connection_lost ? store_error::kUnavailable : store_error::kWrite,
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
    return make_error(store_error::kWrite, "members: " + scrub(e.what(), url_));
  }
}

}  // namespace trainwatch::postgres
