// JobRegistry: every job the server watches, fed by node reports from HTTP threads and
// evaluated by the engine's job checker on its io thread.
//
// Threading: every public call may come from any thread; one mutex guards the map and the
// JobStates in it, held for an ingest or an analysis (microseconds), never across I/O.
// Bounds: at most kMaxAutoJobs jobs created by reports (more answer kTooManyJobs, 429).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/clock.h"
#include "core/model.h"
#include "jobs/analysis.h"
#include "jobs/job_state.h"
#include "jobs/report.h"

namespace trainwatch::jobs {

inline constexpr size_t kMaxAutoJobs = 1000;

enum class IngestOutcome {
  kAccepted,
  kCreated,        // the job was unknown and jobs.auto_create made it: add its monitor
  kUnknownJob,     // 404
  kTooManyJobs,    // 429: kMaxAutoJobs reached
  kTooManyNodes,   // 429: kMaxNodesPerJob reached
};

// A copy of one job for the API: its state, its spec and the analysis at the copy's time.
struct JobSnapshot {
  std::shared_ptr<const JobState> state;  // a copy, safe to read without the lock
  JobCheckSpec spec;
  JobVerdict verdict;
  MonoTime at{};
  SystemTime wall{};
};

class JobRegistry {
 public:
  explicit JobRegistry(const Clock& clock) : clock_(clock) {}

  // Declared job monitors and the jobs: section. Call at start and on every reload.
  void configure(const Config& config);

  IngestOutcome ingest(const std::string& job, const NodeReport& report);

  // The monitor an auto-created job runs as (type job, the jobs: section's notify and
  // thresholds).
  MonitorConfig auto_monitor(const std::string& job) const;

  // The check result of one evaluation, for the engine. A down verdict whose culprit is
  // undecided (analysis.h) repeats the job's previous result instead.
  CheckResult evaluate(const MonitorConfig& monitor);

  std::vector<std::string> names() const;
  std::optional<JobSnapshot> snapshot(const std::string& job) const;

 private:
  struct Entry {
    JobState state;
    JobCheckSpec spec;
    std::optional<CheckResult> last_result;
    Entry(const std::string& name, MonoTime created) : state(name, created) {}
  };

  const Clock& clock_;
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<Entry>> jobs_;
  std::set<std::string> declared_;
  size_t auto_created_ = 0;
  JobsConfig jobs_config_;
};

}  // namespace trainwatch::jobs
