// MemberRegistry: the members table of an installation whose `trainwatch serve` replicas
// share one database; cluster/membership.h says what the rows mean. One of the store's
// roles, apart from Store: only a store that several processes can share has one
// (PostgreSQL, not SQLite), and only cluster/replica_set.h uses it.
#pragma once

#include <string>
#include <vector>

#include "core/clock.h"
#include "core/result.h"

namespace trainwatch {

// One member, with its ages on the database's clock.
struct MemberRow {
  std::string id;
  std::string label;   // host:pid, for people reading the table or the log
  std::string config;  // what its monitors are (cluster::config_fingerprint)
  Millis joined_age{0};
  Millis seen_age{0};
};

class MemberRegistry {
 public:
  virtual ~MemberRegistry() = default;
  // Writes this member's beat (its row, on the first: id, label and config; the ages are
  // the database's) and returns every member's row. `rejoin`: the member joins anew, as
  // if its row were new (its joined age starts again from 0), because its lease lapsed
  // and what it knew is stale: it settles again before it owns anything.
  // Rows silent for kForgetAfter are deleted on the way. Blocks for one round trip, or a
  // connect timeout when the database is unreachable ("store.unavailable").
  // `wall_now` is the member's wall clock as it begins the beat: when it differs from the
  // database's by more than kMaxClockSkew the beat is refused ("store.clock") and writes
  // nothing, so the member's lease lapses as if it were cut off, and the others take its
  // monitors: whatever it stamped (incidents, results, alerts) would be that far off.
  virtual Result<std::vector<MemberRow>> beat(const MemberRow& self, SystemTime wall_now,
                                              bool rejoin = false) = 0;
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
  // A clock synchronised by NTP is within milliseconds of the database's; this also
  // leaves room for the beat's round trip on a slow network.
  static constexpr Millis kMaxClockSkew{2'000};
};

}  // namespace trainwatch
