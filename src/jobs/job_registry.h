// JobRegistry: every job the server watches, fed by node reports (jobs/report_intake.h,
// on its apply thread, once stored) and evaluated by the job checker on its own thread
// (jobs/job_checker.h), never on the engine's.
//
// Threading: every public call may come from any thread. Four locks, always taken in this
// order and never across I/O:
//   1. mu_, the map's: held only to find, add or remove an entry and read its spec.
//   2. an entry's analysis_mu: one analysis (and its ledger) at a time, whether the
//      job checker's tick or analyse_others() runs it; a memo is read under it.
//   3. an entry's state_mu: unique for an ingest; shared for the analysis and for a reader
//      copying the state, so the analysis never holds up a reader.
//   4. an entry's verdict_mu: held to publish or read the last verdict (a pointer swap).
// The analysis runs once per tick, in the job checker's evaluate(), which publishes its verdict
// (on replicas, analyse_others() does the same for the jobs another replica checks).
// Readers (the API, the job pages, /metrics) show that verdict and never analyse: what
// they show is what the engine applied, even when reports arrived after the tick. Before
// the first tick a job's verdict is an empty one in phase `waiting`.
//
// Bounds, with the behaviour at each (IngestOutcome says which refused a report):
//   kMaxAutoJobs auto-created jobs: one more answers kTooManyJobs once none has expired.
//   jobs.expire_after: an auto-created job with no report for this long is released (its
//     monitor through the on_expired callback, its state here) at its next evaluation or
//     when the cap above is reached; a later report creates it anew.
//   jobs.max_ranks_per_node ranks in one report: kTooManyRanksOnNode, nothing applied.
//   a declared world_size, else jobs.max_ranks, ranks per job: a report that would add
//     ranks past it answers kTooManyRanks, nothing applied.
//   kMaxNodesPerJob nodes per job (job_state.h): kTooManyNodes.
// Every refusal is counted (refusals()) and logged at most once per kRefusalLogEvery.
//
// Files: job_registry.cc holds the map, admission, ingest and snapshots;
// job_publication.cc the analysis and what it publishes (verdict, ranks, ledger).
#pragma once

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "config/config.h"
#include "core/clock.h"
#include "core/model.h"
#include "jobs/analysis.h"
#include "jobs/interruption.h"
#include "jobs/job_state.h"
#include "jobs/rank_health.h"
#include "jobs/report.h"

namespace trainwatch::jobs {

inline constexpr size_t kMaxAutoJobs = 1000;
// A snapshot copies every rank of a job up to this many; a bigger job's snapshot carries
// its rank summary only (pages and /metrics then show rank ranges by health).
inline constexpr size_t kMaxDetailedRanks = 1024;
// Past kMaxDetailedRanks, a detailed snapshot copies only the nodes the findings name, at
// most this many: a 131,072-rank job has 16,384 nodes, and a reader wants the broken ones.
inline constexpr size_t kMaxNamedNodes = 64;
inline constexpr Millis kRefusalLogEvery{10'000};

enum class IngestOutcome {
  kAccepted,
  kCreated,             // the job was unknown and jobs.auto_create made it: add its monitor
  kUnknownJob,          // 404
  kTooManyJobs,         // 429: kMaxAutoJobs reached and none expired
  kTooManyNodes,        // 429: kMaxNodesPerJob reached
  kTooManyRanks,        // 422: world_size or jobs.max_ranks reached
  kTooManyRanksOnNode,  // 422: the report carries more than jobs.max_ranks_per_node
  kOutdated,            // a stored report older than the node's newest: nothing applied
};

struct IngestResult {
  IngestOutcome outcome = IngestOutcome::kAccepted;
  size_t limit = 0;   // the bound that refused it
  size_t actual = 0;  // what the report asked for: ranks the job would have, or ranks in it
  std::string bound;  // the bound's name for people: "jobs.max_ranks", "world_size"...
};

// Reports refused, by the bound that refused them.
struct IngestRefusals {
  uint64_t too_many_jobs = 0, too_many_nodes = 0, too_many_ranks = 0, too_many_ranks_on_node = 0;
};

// How much of a job a snapshot copies: what its reader needs, and no more, since the copy
// is made under the job's lock, which the job's reports wait for.
enum class SnapshotDetail {
  kSummary,  // no ranks, no nodes: lists of jobs
  kNodes,    // every node, no ranks: /metrics' age of each node's last report
  kDetail,   // every rank and node up to kMaxDetailedRanks ranks; past it, the ranks'
             // summary by health, and only the nodes the findings name (named_nodes) with
             // their ranks
};

// A copy of one job for readers, bounded whatever the job's size.
struct JobSnapshot {
  // A copy without series (series() copies one metric), with the ranks and nodes its
  // SnapshotDetail asked for (ranks_omitted, nodes_omitted).
  std::shared_ptr<const JobState> state;
  JobCheckSpec spec;
  std::shared_ptr<const JobVerdict> verdict;         // the last tick's, shared, never null
  std::shared_ptr<const InterruptionLedger> ledger;  // as of that tick, never null
  size_t rank_count = 0;
  bool ranks_omitted = false;  // state holds no ranks, or only those of named_nodes
  JobFront front;              // of every rank, whichever the state holds
  size_t node_count = 0;
  bool nodes_omitted = false;  // state holds only the nodes in named_nodes
  // The nodes the findings name, in the findings' order (the culprit's first), at most
  // kMaxNamedNodes; filled when nodes_omitted.
  std::vector<std::string> named_nodes;
  int64_t max_step = -1;
  RankSummary rank_summary;
  MonoTime at{};
  SystemTime wall{};
};

class JobRegistry {
 public:
  explicit JobRegistry(const Clock& clock) : clock_(clock) {}

  // Declared job monitors and the jobs: section. Call at start and on every reload.
  void configure(const Config& config);

  // Called with the name of each auto-created job released after jobs.expire_after, on
  // the thread that released it, with the registry's lock held: it must not call back
  // into the registry (post, as Engine::release_monitor does). Being under the lock orders
  // it before the creation of a job of the same name by a later report. Set before
  // reports arrive.
  void set_on_expired(std::function<void(const std::string&)> on_expired) {
    on_expired_ = std::move(on_expired);
  }

  // Whether `report` is within every bound (the same refusals as ingest(), counted and
  // logged the same), without applying it or creating its job: ReportIntake asks before it
  // stores a report, so one past a bound is neither stored nor applied. kAccepted when the
  // report may be applied (its job created, if auto_create allows); a report that passes
  // here may still be refused by the ingest() after it is stored, if another report took
  // the room in between.
  IngestResult admit(const std::string& job, const NodeReport& report);
  IngestResult ingest(const std::string& job, const NodeReport& report);
  // At start, before the stored reports: a job's attempts and ledger as its checker last
  // stored them (job_memo.h). Creates an auto-created job as a report would (kCreated:
  // add its monitor); kOutdated when the job has had a report already. An unreadable memo
  // is an error and changes nothing.
  Result<IngestOutcome> resume(const std::string& job, std::string_view memo);
  // Called from evaluate(), on the job checker's thread, with a job's memo each time an
  // attempt begins or its ledger changes, for the store. Set before the engine starts.
  void set_on_memo(std::function<void(const std::string& job, std::string memo)> on_memo) {
    on_memo_ = std::move(on_memo);
  }
  // A report another replica took `age` ago (jobs/job_journal.h): applied as received
  // then, unless the node already has a report received since (kOutdated).
  IngestResult ingest(const std::string& job, const NodeReport& report, Millis age);

  // The monitor an auto-created job runs as (type job, the jobs: section's notify and
  // thresholds).
  MonitorConfig auto_monitor(const std::string& job) const;

  // The check result of one evaluation, for the engine; from the job checker's thread, one
  // evaluation at a time. A down verdict whose culprit is
  // undecided (analysis.h) repeats the job's previous result instead.
  CheckResult evaluate(const MonitorConfig& monitor);
  // On replicas: analyses the jobs `standby_here` says this one is the standby of (it holds
  // them, job_peers.h, but another checks them), so the reads it answers show them as the
  // owner does, and the interruption ledger it keeps is complete when it takes one over.
  // Jobs it does not hold are not analysed: their reads go to their holders. Releases
  // expired jobs as evaluate() does.
  void analyse_others(const std::function<bool(const std::string&)>& standby_here);

  std::vector<std::string> names() const;
  std::optional<JobSnapshot> snapshot(const std::string& job,
                                      SnapshotDetail detail = SnapshotDetail::kDetail) const;
  // One metric's series ("step_time"...) by key, copied; nullopt for an unknown job.
  std::optional<std::map<std::string, Series>> series(const std::string& job,
                                                      const std::string& metric) const;

  IngestRefusals refusals() const;
  // Every job's interruptions by cause, for the installation's table and /metrics.
  std::map<InterruptionKind, CauseTotals> interruption_totals() const;
  uint64_t expired() const;

 private:
  // The ranks by health as the tick saw them, built with its verdict: a reader of a
  // 131,072-rank job gets them without walking its ranks under the job's lock.
  struct PublishedRanks {
    RankSummary summary;
    JobFront front;
  };

  struct Entry {
    explicit Entry(const std::string& name, MonoTime created) : last_report(created), state(name, created) {}
    // Under the registry's mu_:
    JobCheckSpec spec;
    MonoTime last_report;
    // Under state_mu (see the top of this file):
    mutable std::shared_mutex state_mu;
    JobState state;
    // Under verdict_mu:
    mutable std::mutex verdict_mu;
    std::shared_ptr<const JobVerdict> verdict;
    std::shared_ptr<const InterruptionLedger> published_ledger;
    std::shared_ptr<const PublishedRanks> published_ranks;  // with `verdict`, from the same tick
    // evaluate()'s only, on the job checker's one thread:
    std::optional<CheckResult> last_result;
    // Under analysis_mu: the job checker's tick and analyse_others() may meet on a job whose
    // owner is changing; each analysis observes the ledger in turn.
    std::mutex analysis_mu;
    InterruptionLedger ledger;
    std::optional<std::tuple<int, uint64_t>> memo_key;  // of the last memo handed out (MemoKey)
  };

  // What a memo changes with: the current attempt, and every change to the ledger (an
  // interruption opened, attributed, given its stacks, closed).
  using MemoKey = std::tuple<int, uint64_t>;    // the attempt, the ledger's revision
  static MemoKey memo_key(const Entry& entry);  // call with analysis_mu and state_mu held
  std::optional<std::string> memo_if_changed(Entry& entry, MonoTime now, SystemTime wall);
  // The job's entry, created if jobs.auto_create allows (result.outcome kCreated); null
  // with result saying why not. Call with mu_ held.
  std::shared_ptr<Entry> find_or_create(const std::string& job, MonoTime now, IngestResult& result,
                                        std::vector<std::string>& expired);
  // The tick's analysis, published for readers.
  std::shared_ptr<const JobVerdict> analyse_and_publish(Entry& entry, const JobCheckSpec& spec, MonoTime now,
                                                        SystemTime wall);
  static std::shared_ptr<const JobVerdict> published_verdict(const Entry& entry);
  static std::shared_ptr<const InterruptionLedger> published_ledger(const Entry& entry);
  // Removes auto-created jobs idle past expire_after; call with mu_ held. Returns their names.
  std::vector<std::string> take_expired(MonoTime now);
  void released(const std::vector<std::string>& names, Millis expire_after);
  void refused(const std::string& job, const IngestResult& result);

  const Clock& clock_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Entry>> jobs_;
  std::set<std::string> declared_;
  size_t auto_created_ = 0;
  JobsConfig jobs_config_;
  std::function<void(const std::string&)> on_expired_;
  std::function<void(const std::string&, std::string)> on_memo_;

  mutable std::mutex counters_mu_;  // guards the three below
  IngestRefusals refusals_;
  uint64_t expired_ = 0;
  std::optional<MonoTime> last_refusal_log_;
  uint64_t refusals_unlogged_ = 0;
};

}  // namespace trainwatch::jobs
