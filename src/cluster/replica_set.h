// ReplicaSet: this process's membership in an installation of several `trainwatch serve`
// replicas on one PostgreSQL (membership.h says who owns what, and why).
//
// A thread of its own beats every kBeatEvery through the MemberRegistry (one round trip;
// a connect timeout at worst, which must not hold up checks or requests), recomputes the
// eligible members, and calls `on_beat(owners_changed)` after every beat that succeeded:
// the server posts Engine::sync_ownership from it, which moves monitors when the owners
// changed and refreshes, for this replica's readers, the state of monitors others own.
// Between beats it waits for nudges (MemberRegistry::await_nudges) and hands those of
// monitors it owns to `on_nudge`, so a failure pinged to another replica is acted on in
// a round trip instead of at the monitor's next deadline.
//
// The lease (membership.h): this replica owns anything only while its lease is valid on
// its own monotonic clock, kLease after the start of its last successful beat; owns()
// asks the clock each time, so a replica that wakes from a pause longer than that owns
// nothing from its first instruction on, before its thread has beaten again. While beats
// fail (the database, or only this replica's connection to it, is gone) the members it
// last read keep their monitors until the lease lapses; then it owns nothing, kLeaseMargin
// before the others (which still reach the database) may take its monitors. The first
// beat that succeeds after a lapse re-joins (MemberRegistry::beat's rejoin): the replica
// settles again like a newcomer and owns what it is given then, under new epochs, from
// the stored state; it never carries on from what it knew before.
//
// A newcomer (or a re-joined replica) that becomes eligible acts only once every other
// live member has beaten since (membership.h, handed_over): until then one of them may
// still hold a monitor that moved to it.
//
// Threading: owns() and members() from any thread; start() and stop() from one.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cluster/database_clock.h"
#include "cluster/membership.h"
#include "core/log_throttle.h"
#include "engine/ownership.h"
#include "storage/member_registry.h"

namespace trainwatch::cluster {

class ReplicaSet final : public engine::Ownership {
 public:
  // `id` must be unique to this process (a random one per start); `label` says which
  // process it is to people (host:pid). Each beat sets `clock` to the database's.
  ReplicaSet(MemberRegistry& registry, DatabaseClock& clock, std::string id, std::string label);
  ~ReplicaSet() override;
  ReplicaSet(const ReplicaSet&) = delete;
  ReplicaSet& operator=(const ReplicaSet&) = delete;

  using OnBeat = std::function<void(bool owners_changed)>;
  // A monitor this replica owns, for which another replica stored a ping to act on now.
  using OnNudge = std::function<void(const std::string& monitor)>;

  // Beats once on the caller's thread (so the engine starts with the owners known), then
  // on the thread, which waits for nudges between beats. The first beat's failure is
  // returned: serve does not start without it.
  Status start(OnBeat on_beat, OnNudge on_nudge);
  // Leaves the members table (a clean handover) and joins the thread.
  void stop();

  // What this replica's monitors are (config_fingerprint), sent with every beat; set it
  // before start() and after each reload. Members whose fingerprint differs are logged.
  void set_config(std::string fingerprint);
  // Where the others reach this replica's HTTP server ("host:port"), sent with every beat
  // from the next on; set once the server listens.
  void set_address(std::string address);

  // Who holds `key` (membership.h, holders_of), as this replica last read the members:
  // whether it is this replica (never while its lease has lapsed, or before it acts), and
  // where the others reach the owner and the standby ("" for this replica, for none, and
  // for a member whose server does not listen yet).
  struct Holding {
    bool owner_here = false, standby_here = false;
    std::string owner_address, standby_address;
  };
  Holding holding(std::string_view key) const;
  // The addresses of the other eligible members, as last read (those not listening yet left out).
  std::vector<std::string> other_addresses() const;

  // False for every monitor once the lease lapsed (see the top).
  bool owns(std::string_view monitor) const override;
  const std::string& member_id() const override { return id_; }
  uint64_t term() const override;
  // The eligible members' ids, as this replica last read them.
  std::vector<std::string> members() const;
  // Why this replica acts on nothing because its beats fail (the database out of reach,
  // its wall clock refused): the last beat's error once the lease has lapsed, for
  // /healthz; nullopt while it may act.
  std::optional<std::string> trouble() const;
  // Why this replica stands down although its beats succeed (they crawl: membership.h,
  // Fitness), for /healthz; nullopt while it may own monitors.
  std::optional<std::string> standing_down() const;
  const std::string& id() const { return id_; }

 private:
  static constexpr Millis kNudgeSlice{250};
  // A host's clock synchronised by NTP is within milliseconds of the database's.
  static constexpr Millis kWallClockTolerance{2'000};

  struct Beat {
    bool changed = false;              // the eligible members changed
    std::optional<std::string> error;  // the beat failed: why
  };
  Beat beat();
  std::vector<std::string> eligible_after(MonoTime started, MonoTime now, const BeatReply& reply);
  void run();
  void warn_of_other_configs(const std::vector<MemberRow>& rows, const std::string& mine, MonoTime now);
  void warn_of_wall_clock(MonoTime now);

  MemberRegistry& registry_;
  DatabaseClock& clock_;
  const std::string id_;
  const std::string label_;
  OnBeat on_beat_;
  OnNudge on_nudge_;
  LogThrottle failure_log_{std::chrono::seconds(10)};
  LogThrottle config_log_{std::chrono::seconds(60)};
  LogThrottle wall_clock_log_{std::chrono::seconds(60)};

  mutable std::mutex mu_;
  std::shared_ptr<const std::vector<std::string>> members_;  // under mu_; never null
  std::map<std::string, std::string> addresses_;             // under mu_: by member id, as last read
  std::string config_;                                       // under mu_
  std::string address_;                                      // under mu_
  MonoTime beat_started_{};                // under mu_: of the last successful beat (the lease's start)
  std::optional<MonoTime> beating_since_;  // under mu_: while a beat waits for its answer
  std::optional<std::string> beat_error_;  // under mu_: the last beat's, if it failed
  bool joined_ = false;                    // under mu_: a beat succeeded once
  // Under mu_: eligible and handed over (membership.h, handed_over) since it last
  // (re-)joined; it owns nothing before.
  bool acting_ = false;
  Fitness fitness_;                // under mu_ (membership.h)
  bool stand_up_pending_ = false;  // under mu_: it stood up; its next beat re-joins
  Millis last_beat_took_{0};       // under mu_
  uint64_t term_ = 0;              // under mu_: re-joins after a lapse
  bool stopping_ = false;          // under mu_
  std::condition_variable wake_;
  std::thread thread_;
};

}  // namespace trainwatch::cluster
