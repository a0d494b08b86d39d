// Membership: which replicas of one installation may own monitors, and which one owns
// each. Pure: rows of the members table in, owners out (replica_set.h does the I/O).
//
// Every `trainwatch serve` on one PostgreSQL is a member: it writes its row (its id and
// the database's now()) every kBeatEvery and reads every row back with two ages measured
// on the database's clock, so replicas whose own clocks disagree still agree on who is
// alive. A member is live while its last beat is at most kMemberTtl old, and eligible to
// own once it has been a member for kSettle: long enough for every other replica to have
// read its row (they beat every kBeatEvery), so the monitors that move to a newcomer
// leave their old owner at about the instant they reach the newcomer, never later than
// one beat after. When no live member has settled (the first member of an empty
// installation, or replicas started together), the eldest is eligible at once.
//
// Ownership is rendezvous (highest random weight) hashing: the owner of a monitor is
// the eligible member whose hash with the monitor's name is highest. Chosen over leases
// because every replica computes it alone from the same member list, with no row per
// monitor to renew (10,000 monitors, one row per replica beating once a second), and
// because a member leaving moves only its own monitors, spread evenly over the others.
// Two replicas can disagree only while they read different member lists, at most one
// beat; the epoch of each monitor's claim (storage/postgres/fence.h) keeps that window
// harmless: the store refuses the writes of the replica whose claim is older.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "core/clock.h"
#include "storage/member_registry.h"

namespace trainwatch::cluster {

inline constexpr Millis kBeatEvery{1'000};
inline constexpr Millis kMemberTtl{6'000};
inline constexpr Millis kSettle{3'000};

// The lease: a replica acts (checks, decides, sends) only while less than kLease has
// passed on its own monotonic clock since the start of its last successful beat. The
// others take its monitors over only once its row is kMemberTtl old on the database's
// clock, and that row was stamped after the beat started: so a replica paused, cut off
// from the database or outliving it stops at least kLeaseMargin before anyone else may
// start. The margin covers what the two clocks may disagree on over a few seconds and
// the moment between a replica's last look at its lease and its act.
inline constexpr Millis kLeaseMargin{1'500};
inline constexpr Millis kLease = kMemberTtl - kLeaseMargin;

// Whether a replica whose last successful beat started at `beat_started` may act at `now`.
inline bool lease_valid(MonoTime beat_started, MonoTime now) { return now - beat_started < kLease; }

// Fitness: a replica whose beats succeed but crawl (a slow link to the database, a starved
// host, a pause in the middle of a beat) keeps or loses its place by a rule with
// hysteresis, so the others do not hand it monitors back each time a beat happens to be
// quick:
//   - it stands down when a beat took longer than kSlowBeat (two such in a row and its
//     lease could lapse between beats);
//   - it stands up again only after kFitAfter of beats that each took less than half
//     kSlowBeat; a beat in between restarts that count, a slow one stands it down again.
// It writes which in its row (MemberRow::fit), and eligible_members passes over members
// that stand down, as long as one that stands up has settled (someone must act). One that
// stands up again re-joins (ReplicaSet): it settles, and the others hand it monitors, as
// to a newcomer. Beats that fail (the database gone) do not stand a replica down: its
// lease does that, and it re-joins when they work again.
inline constexpr Millis kSlowBeat{2'000};
inline constexpr Millis kFitAfter{10'000};

struct Fitness {
  bool fit = true;
  // While it stands down: when the run of quick beats that may stand it up began.
  std::optional<MonoTime> quick_since;
};

// After a successful beat that began at `started` and ended at `now`.
void note_beat(Fitness& fitness, MonoTime started, MonoTime now);

// The ids of the members that may own monitors, sorted: the live, settled ones that stand
// up (Fitness), or while none does, the live settled ones.
std::vector<std::string> eligible_members(const std::vector<MemberRow>& rows);

// Whether `self`, eligible (it is in eligible_members(rows)), may begin acting on what it
// owns: every other live member has beaten since `self` became eligible (their rows were
// stamped at least kSettle after its join), so each has read that it lost those monitors
// and let them go; a member whose beats fail keeps its list only until its lease lapses,
// and its row is not live past kMemberTtl, so the wait is bounded. The eldest owning all
// while none has settled may act at once: the others it could take from are not live or
// own nothing. The 1.5 s handover gap alone assumed every old owner beats within a
// second; right after a database restart their beats can fail or be slow.
bool handed_over(const std::vector<MemberRow>& rows, const std::string& self);

// What a replica's monitors are, in 16 hex digits: the names of the config file's
// monitors, in order of name. Replicas that disagree on them disagree on who owns what (a
// monitor one of them lacks may be owned by that one, and checked by nobody), so the
// members compare it at every beat.
std::string config_fingerprint(const Config& config);

// The live members whose fingerprint is not `mine`: one installation run from two
// different files, or a reload not yet done everywhere.
std::vector<const MemberRow*> other_configs(const std::vector<MemberRow>& rows, const std::string& mine);

// The member that owns `key` among `members`; empty when there is none.
std::string_view owner_of(std::string_view key, const std::vector<std::string>& members);

// The owner of `key` and its standby, the member of the next highest weight (empty with
// fewer than two members). A job's reports are applied by both (docs/architecture.md,
// flow 3), so when the owner goes, the member that takes its job over (the standby: the
// highest weight among those left) already holds it whole. The ids are views into `members`.
struct Holders {
  std::string_view owner, standby;
};
Holders holders_of(std::string_view key, const std::vector<std::string>& members);

// The weight of `member` for `key`: stable across processes, platforms and versions (it
// decides who checks what, so every replica must compute the same).
uint64_t rendezvous_weight(std::string_view key, std::string_view member);

}  // namespace trainwatch::cluster
