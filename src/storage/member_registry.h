// MemberRegistry: the members table of an installation whose `trainwatch serve` replicas
// share one database; cluster/membership.h says what the rows mean. One of the store's
// roles, apart from Store: only a store that several processes can share has one
// (PostgreSQL, not SQLite), and only cluster/replica_set.h uses it.
#pragma once

#include <string>
#include <vector>

#include "core/clock.h"
#include "core/result.h"
#include "storage/store_errors.h"

namespace trainwatch {

// One member, with its ages on the database's clock.
struct MemberRow {
  std::string id;
  std::string label;   // host:pid, for people reading the table or the log
  std::string config;  // what its monitors are (cluster::config_fingerprint)
  Millis joined_age{0};
  Millis seen_age{0};
  // Where the other replicas reach its HTTP server ("host:port"), to hand it the reports
  // and reads of the jobs it holds; "" until its server listens.
  std::string address = {};
  // Its beats are quick enough for it to own monitors (cluster/membership.h, Fitness).
  bool fit = true;
};

// What a beat read: every member's row, and the database's clock.
struct BeatReply {
  std::vector<MemberRow> members;
  // The database's clock as beat() returns (its reading carried forward by the time the
  // rest of the beat took), give or take `uncertainty`: half the round trip that read it.
  SystemTime database_now{};
  std::chrono::microseconds uncertainty{0};
};

class MemberRegistry {
 public:
  virtual ~MemberRegistry() = default;
  // Writes this member's beat (its row: id, label, config and address; the ages are the
  // database's) and returns every member's row. `rejoin`: the member joins anew, as
  // if its row were new (its joined age starts again from 0), because its lease lapsed
  // and what it knew is stale: it settles again before it owns anything.
  // Rows silent for kForgetAfter are deleted on the way. Blocks for one round trip, or a
  // connect timeout when the database is unreachable (store_error::kUnavailable).
  // The reply also reads the database's clock (cluster/database_clock.h).
  virtual Result<BeatReply> beat(const MemberRow& self, bool rejoin = false) = 0;
  // Deletes this member's row, so that a clean stop hands its work over at the others'
  // next beat instead of after the member's time to live.
  virtual Status leave(const std::string& id) = 0;

  // Waits up to `timeout` for nudges and returns them (none when the time passed): each
  // names a monitor for which another replica committed a ping that the monitor's owner
  // must act on now (RecordPing::tell_owner). Fails at once, without waiting, when the
  // registry is not connected; beat() connects. Nudges sent while it was not connected
  // are lost: the owner reads those pings at its next deadline.
  virtual Result<std::vector<std::string>> await_nudges(Millis timeout) = 0;

  // Long past any time to live: the row of a member that died is kept this long for
  // people who look at the table.
  static constexpr Millis kForgetAfter{600'000};
};

}  // namespace trainwatch
