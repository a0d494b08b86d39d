// StoreFollower: what a replica reads back of the store after each beat of its
// ReplicaSet (replica_set.h), so that what other replicas changed reaches this one within
// a beat: the API's catalog (channels, monitors, maintenance windows), then who owns
// which monitor, then the node reports and the jobs.
//
// The order matters. Channels come before monitors: a monitor another replica created may
// notify a channel it created. Ownership is synced after the catalog, so a monitor just
// read is taken over at once; the outbox is woken then, as what a replica that died held
// is claimable now, or soon. The jobs come last: the reports other replicas took, then the
// state of the jobs this replica owns is written for a restart of both their holders,
// then the jobs this replica stands by for (and does not own) are analysed.
//
// Failures: a catalog read that fails skips the part after it until the next beat, as
// that part may name what the failed read missed (a monitor its channel, a window its
// monitor); ownership and the jobs are followed anyway.
// The log gets one line per kLogEvery at most, counting the failures held back, so a
// database that is away does not write a line a beat.
//
// What it follows it gets as functions (Followed), so cluster/ knows neither the
// alerting's channels nor the catalog's monitors; who holds a job it asks the replica
// set and the peers.
//
// Threading: follow() on the replica set's beat thread only.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "cluster/replica_set.h"
#include "core/clock.h"
#include "core/log_throttle.h"
#include "core/result.h"
#include "jobs/job_peers.h"

namespace trainwatch::cluster {

class StoreFollower {
 public:
  static constexpr std::chrono::seconds kLogEvery{10};

  using JobTest = std::function<bool(const std::string& job)>;
  // Everything is called on the beat's thread, in the order listed (see the top).
  struct Followed {
    // The API's catalog: each reads what other replicas changed (true when it changed).
    std::function<Result<bool>()> channels;
    std::function<Result<bool>()> monitors;
    std::function<Result<bool>()> maintenance;
    std::function<void()> sync_ownership;          // the engine takes over and lets go of monitors
    std::function<void()> wake_outbox;             // the dispatcher reads (claims) the outbox again
    std::function<Result<size_t>()> node_reports;  // the reports other replicas took
    // Writes the kept state of the jobs `writes_here`; `held_here` tells who holds each.
    std::function<void(const JobTest& writes_here, const JobTest& held_here)> keep_jobs;
    // Analyses the jobs `standby_only` says this replica stands by for and does not own.
    std::function<void(const JobTest& standby_only)> analyse_standby;
  };

  StoreFollower(const Clock& clock, const ReplicaSet& replicas, const jobs::JobPeers& peers,
                Followed followed);

  // Follows the store once: after each beat.
  void follow();

 private:
  void follow_catalog();

  const Clock& clock_;
  const ReplicaSet& replicas_;
  const jobs::JobPeers& peers_;
  Followed followed_;
  LogThrottle log_{kLogEvery};
};

}  // namespace trainwatch::cluster
