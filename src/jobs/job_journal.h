// JobJournal: jobs kept in the store: the newest report of each node, and each job's
// memo (job_memo.h: its attempts and interruption ledger). So a job is analysed from all
// its nodes whichever replica each node reports to, and a restarted server resumes its
// jobs instead of starting blind.
//
//   save()     the route, after JobRegistry::ingest applied the report here: the raw body
//              goes to the store, and the agent hears 200 only once it is committed.
//   save_memo() the job's checker, when its memo changed (JobRegistry::set_on_memo).
//   restore()  at start, once: each job's memo, then the newest report of each node,
//              applied as if it had just arrived. Their true age is the server's downtime
//              as much as the node's silence, so a node is silent only if it stays so
//              from now on (no page for the restart itself); a rank's own ages in its
//              report (since its last step, since it exited) count as reported.
//   keep()     on replicas, instead of save(): a holder of the job (job_peers.h) keeps the
//              body as its node's newest, in memory, and applies the report at once.
//   write_kept() on replicas, at every beat: the bodies kept for each job this replica
//              owns go to the store once kWriteEvery passed since the job's last write, or
//              sooner after its memo changed (a launch, an interruption: what a verdict
//              change brings), kMinWriteGap after its last write at the earliest. One
//              row per node, as save() writes, so restore() and follow() read them
//              alike; a takeover by the standby needs none of them (it applied every
//              report), a restart of both holders resumes from them.
//   follow()   on replicas, at every beat: the reports other replicas saved since the last
//              call, applied as received then (JobRegistry::ingest with an age), so every
//              replica holds every job whole: the one that checks it, and those that may
//              take it over or answer a reader.
//
// Why not one row per report on replicas: at 16,384 nodes reporting every 5 s it is 3,277
// upserts of 6 KB a second, each read back by every replica (bench/RESULTS.md). The
// standby's memory holds what the store held for a takeover; the store keeps the rest.
//
// Threading: save(), keep() and save_memo() from any thread; restore(), follow() and
// write_kept() from one thread at a time.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "core/clock.h"
#include "core/log_throttle.h"
#include "jobs/job_registry.h"
#include "jobs/report.h"
#include "storage/store.h"

namespace trainwatch::jobs {

class JobJournal {
 public:
  // `writer`: this replica's member id ("" for a lone server); a follower skips its own
  // rows, which it applied when it took them. `on_created`: a stored report created an
  // auto-created job here, which needs its monitor (JobRegistry::auto_monitor).
  JobJournal(Store& store, JobRegistry& registry, const Clock& clock, std::string writer,
             std::function<void(const std::string& job)> on_created);

  // Queues the report's body for the store; false when the write queue is full.
  bool save(const std::string& job, const std::string& node, std::string body, WriteDone done);

  // Queues the job's memo for the store; a memo that is not stored is logged by the store
  // and written again at the job's next change.
  void save_memo(const std::string& job, std::string memo);

  // Returns how many reports were applied.
  Result<size_t> restore(Millis max_age);
  Result<size_t> follow();

  // How long a report applied on replicas may wait for the store: the most a restart of
  // both its job's holders loses (each node's next report brings it back).
  static constexpr Millis kWriteEvery{60'000};
  // A change of the job's memo writes its state sooner, but not more often than this: a
  // job whose attempts or interruptions change every second (nodes failing one by one)
  // would otherwise write all its nodes' states every second.
  static constexpr Millis kMinWriteGap{10'000};
  void keep(const std::string& job, const std::string& node, std::string body);
  // `writes_here(job)`: whether this replica writes the job's state (it owns the job).
  // Bodies of jobs it holds but does not write wait for it to own them; those of jobs it
  // no longer holds are dropped. Returns how many bodies went to the store's queue.
  size_t write_kept(const std::function<bool(const std::string&)>& writes_here,
                    const std::function<bool(const std::string&)>& held_here);
  // On a clean stop: every body kept, whoever owns its job, so the replicas that take the
  // jobs over (and a restart) find the newest state this one had.
  size_t write_all_kept();

 private:
  // Reads from cursor_ to the end (bounded by kMaxPages) and applies each row `apply` keeps.
  Result<size_t> read(bool restoring, Millis max_age);
  Status resume_jobs(Millis max_age);

  static constexpr int kMaxPages = 20;

  struct Kept {
    std::string body;
    SystemTime received{};
  };
  struct KeptJob {
    std::map<std::string, Kept> nodes;  // the newest body of each node not yet written
    MonoTime written{};                 // the last write_kept that wrote it
    bool due = false;                   // its memo changed: write at the next beat
  };
  // Writes the bodies kept for each job held here for which `now_for` says so; drops
  // those of jobs no longer held here.
  size_t write_kept_when(const std::function<bool(const std::string&, const KeptJob&)>& now_for,
                         const std::function<bool(const std::string&)>& held_here);

  Store& store_;
  JobRegistry& registry_;
  const Clock& clock_;
  const std::string writer_;
  const std::function<void(const std::string&)> on_created_;
  int64_t cursor_ = 0;
  LogThrottle bad_row_log_{std::chrono::seconds(60)};
  LogThrottle kept_write_log_{std::chrono::seconds(60)};
  std::mutex kept_mu_;
  std::map<std::string, KeptJob> kept_;  // under kept_mu_, by job
};

}  // namespace trainwatch::jobs
