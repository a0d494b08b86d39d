// The Checker for `type: job` monitors: a check is one analysis of the job's last reports
// (the reports arrive by push; nothing is fetched). Its result takes the same path as
// every other check: state machine, incidents, store, alerts.
//
// Threading: check() is called on the engine's io_context and returns at once. The
// analysis (JobRegistry::evaluate: about 15 ms for a job of 16k ranks) runs on the
// checker's own thread, and its verdict is posted back to the io_context as the check's
// result, so the engine's thread never runs or waits for an analysis. One thread: the
// analyses of all jobs run one after another, which is what JobRegistry::evaluate's
// per-job state (the last result) expects.
//
// Bound: the engine runs at most one check per monitor at a time, so at most one analysis
// per job monitor is queued or running here.
//
// Lifetime: stop(), once the engine's io_context has stopped, lets the analyses already
// queued finish and starts no other: an analysis hands memos to the journal
// (JobRegistry::set_on_memo), which must outlive it. The destructor does the same. Their
// results are posted to the io_context, which must outlive the checker, as must the
// registry.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>

#include "checks/checker.h"
#include "jobs/job_registry.h"

namespace trainwatch::jobs {

class JobChecker final : public checks::Checker {
 public:
  JobChecker(boost::asio::io_context& io, JobRegistry& registry) : io_(io), registry_(registry) {}
  ~JobChecker() override;
  JobChecker(const JobChecker&) = delete;
  JobChecker& operator=(const JobChecker&) = delete;

  void check(std::shared_ptr<const MonitorConfig> monitor, checks::CheckDone done) override;
  // Waits for the analyses queued or running; a check after it never runs. For shutdown.
  void stop() { analyses_.join(); }

 private:
  boost::asio::io_context& io_;
  JobRegistry& registry_;
  boost::asio::thread_pool analyses_{1};  // last: joined first, while the rest still exists
};

}  // namespace trainwatch::jobs
