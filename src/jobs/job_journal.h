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
//   follow()   on replicas, at every beat: the reports other replicas saved since the last
//              call, applied as received then (JobRegistry::ingest with an age), so every
//              replica holds every job whole: the one that checks it, and those that may
//              take it over or answer a reader.
//
// Threading: save() from any thread; restore() and follow() from one thread at a time.
#pragma once

#include <functional>
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

 private:
  // Reads from cursor_ to the end (bounded by kMaxPages) and applies each row `apply` keeps.
  Result<size_t> read(bool restoring, Millis max_age);
  Status resume_jobs(Millis max_age);

  static constexpr int kMaxPages = 20;

  Store& store_;
  JobRegistry& registry_;
  const Clock& clock_;
  const std::string writer_;
  const std::function<void(const std::string&)> on_created_;
  int64_t cursor_ = 0;
  LogThrottle bad_row_log_{std::chrono::seconds(60)};
};

}  // namespace trainwatch::jobs
