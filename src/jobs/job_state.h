// What the server knows about one training job: its nodes, its ranks (each from the last
// report that carried it), short windows of per-rank progress for rates and stragglers,
// time series for the API, and the timeouts it has learned. Fed by ingest(); read by
// analyse() (analysis.h) and the API. Not thread-safe: JobRegistry serialises access.
//
// Every instant here is the server's: a report's ages are subtracted from the time the
// server received it (MonoTime for intervals, SystemTime only for display).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/clock.h"
#include "jobs/launch_record.h"
#include "jobs/learned_timeouts.h"
#include "jobs/report.h"

namespace trainwatch::jobs {

// Report-to-report progress of one rank, for rates, step costs and throughput.
struct ProgressSample {
  MonoTime at{};
  uint64_t step_reports = 0;
  std::optional<double> cpu_s;
  // The agent's sampled time in collectives and time sampled, cumulative (CollectiveReport);
  // absent when the rank marks no collectives.
  std::optional<double> wait_s, sampled_s;
  uint64_t tokens = 0, samples = 0;
  // Some rank of the job was in a checkpoint, an evaluation or a declared warm-up at or since
  // the last sample: the window says nothing of the job's pace.
  bool off_pace = false;
};

// Steps of a process's warm-up (its first kStragglerWarmupSteps: compilation, autotuning,
// the first batches) tell nothing of what a step costs.
inline constexpr uint64_t kStragglerWarmupSteps = 50;
// A rank's step costs are taken over its newest report windows back to this many steps
// made over this long at least (step_costs): about twenty steps, and never so few seconds
// that the agent's samples of its time in collectives are too few to tell.
inline constexpr uint64_t kStragglerRecentSteps = 20;
inline constexpr Millis kStragglerRecentSpan{5'000};

// What a rank's progress window says its steps cost: the steps made between its samples,
// past the warm-up and outside checkpoints and declared phases, with their wall and CPU
// seconds (cpu_known is false when a sample lacked CPU time) and, when the rank marks its
// collectives, the time it spent outside them (busy_s: its time to reach the collective,
// wall time less the share of the agent's samples that found it in one). The window changes
// only with a report, so this is kept with it: the straggler rule reads it each beat
// instead of walking every window.
struct StepCosts {
  uint64_t steps = 0;
  double wall_s = 0, cpu_s = 0, busy_s = 0;
  bool cpu_known = true;
  bool busy_known = true;
};
StepCosts step_costs(const std::deque<ProgressSample>& window);

struct RankRecord {
  RankReport last;
  std::string node;
  MonoTime seen{};                       // when the report carrying it arrived
  std::optional<MonoTime> last_step_at;  // server time of the current step
  std::optional<MonoTime> gone_at;       // when its process was first seen gone
  std::optional<MonoTime> error_at;      // when it recorded its last error
  std::optional<MonoTime> checkpoint_begin_at;
  std::optional<MonoTime> evaluating_since;  // when its reports began to say it evaluates
  std::deque<ProgressSample> window;         // newest last, at most kProgressWindow
  StepCosts costs;                           // step_costs(window)
  // The rank's latest run of non-finite losses: its first step, and when that step was
  // seen on the server's clock. Both are fixed when the run is first heard of, so later
  // reports (whose ages shift with the network's delay) never reorder two ranks. From the
  // node report's nonfinite_* fields; for an older agent or library, from its losses: the
  // first report of a run gives its step and that step's time.
  std::optional<int64_t> nonfinite_first_step;
  std::optional<MonoTime> nonfinite_first_at;
};

struct NodeRecord {
  std::string name;
  MonoTime last_seen{};
  SystemTime last_seen_wall{};
  Millis report_every{5'000};
  bool final = false;  // its agent said goodbye: silence afterwards is expected
  int64_t agent_pid = 0;
  uint64_t reports = 0;
  std::vector<int> ranks;  // the ranks its last report carried
  std::vector<GpuReport> gpus;
  std::vector<IbPortReport> ib_ports;
  std::vector<DiskReport> disks;
  std::optional<uint64_t> memory_available_bytes, memory_total_bytes;
  std::optional<RendezvousReport> rendezvous;
};

// The job's throughput over one report window, ending at `at`.
struct ThroughputSample {
  MonoTime at{};
  double value = 0;
};

// A bounded time series: (wall ms, value), oldest dropped past kMaxSeriesPoints.
struct SeriesPoint {
  int64_t at_ms = 0;
  double value = 0;
};
using Series = std::deque<SeriesPoint>;

inline constexpr size_t kMaxAttempts = 64;       // attempts kept per job; the oldest go first
inline constexpr size_t kMaxRuns = 64;           // runs kept per job; the oldest go first
inline constexpr size_t kProgressWindow = 12;    // reports kept per rank for rates (1 min at 5 s)
inline constexpr size_t kMaxSeriesPoints = 720;  // per series: an hour at 5 s; older points dropped
// A report from one more node is refused (429). Frontier jobs run 16,384 nodes of 8 GPUs
// (131,072 ranks); twice that leaves room for nodes of 4.
inline constexpr size_t kMaxNodesPerJob = 32'768;
inline constexpr size_t kThroughputHistory = 120;  // job throughput samples kept, of each kind
inline constexpr int kWarmupSteps = 3;             // steps before the step timeout is learned/applied
// Keys (ranks, or node GPUs) one metric's series keeps: a chart of more lines is unreadable,
// and 720 points for each of 65,536 ranks would be the server's largest memory. A key past
// the bound gets no series; the ranks' own state and findings are unaffected.
inline constexpr size_t kMaxSeriesKeys = 256;

class JobState {
 public:
  explicit JobState(std::string name, MonoTime created = MonoTime{})
      : name_(std::move(name)), created_(created) {}

  // Takes one node report received at (now, wall). Returns false, changing nothing, when
  // the report is from a new node and the job already has kMaxNodesPerJob nodes.
  bool ingest(const NodeReport& report, MonoTime now, SystemTime wall);

  const std::string& name() const { return name_; }
  MonoTime created() const { return created_; }
  const std::map<std::string, NodeRecord>& nodes() const { return nodes_; }
  const std::map<int, RankRecord>& ranks() const { return ranks_; }
  const LearnedTimeouts& learned() const { return learned_; }
  std::optional<MonoTime> first_report() const { return first_report_; }
  std::optional<MonoTime> first_step() const { return first_step_; }
  // Newest last; never empty once a rank has reported. The last is the current one (open).
  const std::deque<AttemptRecord>& attempts() const { return attempts_; }
  const std::deque<RunRecord>& runs() const { return runs_; }
  // The attempt `number`, or null when it is no longer kept.
  const AttemptRecord* attempt(int number) const {
    for (const auto& a : attempts_) {
      if (a.number == number) return &a;
    }
    return nullptr;
  }
  // Start-up is timed from here: the current attempt's first report.
  std::optional<MonoTime> attempt_started() const {
    return attempts_.empty() ? first_report_ : std::optional<MonoTime>(attempts_.back().started);
  }
  int64_t last_ok_checkpoint_step() const { return last_ok_checkpoint_step_; }
  // When attempt `number` began; the job's first report when that attempt is no longer kept.
  MonoTime attempt_start(int number) const {
    for (const auto& a : attempts_) {
      if (a.number == number) return a.started;
    }
    return first_report_.value_or(MonoTime{});
  }
  // Checkpoint interval learned from consecutive good checkpoints (nullopt until two).
  std::optional<Millis> checkpoint_interval() const { return checkpoint_interval_; }
  std::optional<MonoTime> last_ok_checkpoint_at() const { return last_ok_checkpoint_at_; }
  // Job throughput (tokens/s, else samples/s, else steps/s) per report window, newest last;
  // windows in a checkpoint or a phase the job declared (evaluation, warm-up) are left out.
  const std::deque<ThroughputSample>& throughput() const { return throughput_; }
  // The same, of the windows in which the job made progress (above zero) only: the baseline
  // a drop is judged against. Kept apart so that a stall, however long, never becomes its
  // own baseline, nor pushes the windows of training out of the history.
  const std::deque<ThroughputSample>& training_throughput() const { return training_throughput_; }
  const char* throughput_unit() const { return throughput_unit_; }
  uint64_t reports() const { return reports_; }
  // The last time any rank was seen in or just after a checkpoint, or in a declared
  // evaluation: progress, for the stall rule (a pause on purpose is not a stall).
  std::optional<MonoTime> last_pause_activity() const { return last_pause_activity_; }

  // At start, before any report: the runs, attempts and first instants a stored memo kept
  // (job_memo.h), which the node reports cannot tell again.
  void resume(std::deque<RunRecord> runs, std::deque<AttemptRecord> attempts,
              std::optional<MonoTime> first_report, std::optional<MonoTime> first_step) {
    runs_ = std::move(runs);
    attempts_ = std::move(attempts);
    first_report_ = first_report;
    first_step_ = first_step;
  }

  // A copy for readers: everything but the series (JobRegistry::series copies one metric),
  // without the ranks when `with_ranks` is false. When `only_nodes` is given, only those
  // nodes and their ranks. Keep in step with the members below.
  JobState copy_for_reader(bool with_ranks, const std::set<std::string>* only_nodes = nullptr) const;

  // Series by metric ("step_time", "loss", "tokens_per_s" per rank; "gpu_mem" per node
  // and GPU), keyed by the series' label ("rank 3", "node-a gpu 0").
  const std::map<std::string, std::map<std::string, Series>>& series() const { return series_; }

 private:
  // Whether r, from `node`, belongs to the current attempt, begins the next attempt of the
  // current run or a new run, or belongs to a launch already replaced (then it is history
  // and ignored). The rules are in job_state.cc, above launch_of.
  enum class LaunchOf { kCurrent, kNewAttempt, kNewRun, kOlder };
  LaunchOf launch_of(const RankReport& r, const std::string& node) const;
  // The report's ranks in the order ingest() takes them (job_state.cc says why).
  std::vector<const RankReport*> in_order_of_news(const NodeReport& report) const;
  bool every_rank_ended() const;
  // Closes the current attempt (and, for kNewRun, its run) with the outcome its ranks
  // show, and opens the next for r.
  void begin_launch(LaunchOf kind, const RankReport& r, MonoTime now, SystemTime wall);
  void update_rank(const RankReport& r, const NodeReport& report, MonoTime now, SystemTime wall,
                   bool off_pace);
  // Notes when the rank began to evaluate, and learns how long an evaluation lasts.
  void track_evaluation(RankRecord& rec, const RankReport& r, MonoTime now);
  void learn_step_gap(const NodeReport& report, bool paused);
  void record_throughput(MonoTime now);
  // Adds (+1) or removes (-1) the rank's last report from the counts of ranks that pause
  // (a checkpoint, an evaluation).
  void count_paused(const RankRecord& rec, int sign);
  void record_gpu_memory(const NodeReport& report, int64_t wall_ms);
  void add_point(const std::string& metric, const std::string& key, int64_t at_ms, double value);

  std::string name_;
  MonoTime created_{};
  std::map<std::string, NodeRecord> nodes_;
  std::map<int, RankRecord> ranks_;
  LearnedTimeouts learned_;
  std::optional<MonoTime> first_report_, first_step_;
  std::deque<AttemptRecord> attempts_;
  std::deque<RunRecord> runs_;
  // The processes (node, pid) of the launch the current one replaced: a late report that
  // still shows one (an agent that has not seen it gone, a slot not yet reclaimed) is
  // history, whatever it says. Replaced at each launch, so it holds one launch's ranks.
  // Ingest's alone: readers' copies lack it.
  std::set<std::pair<std::string, int64_t>> retired_;
  std::optional<MonoTime> last_ok_checkpoint_at_;
  int64_t last_ok_checkpoint_step_ = -1;
  std::optional<Millis> checkpoint_interval_;
  std::optional<MonoTime> last_pause_activity_;
  std::optional<MonoTime> last_warmup_activity_;
  std::deque<ThroughputSample> throughput_, training_throughput_;
  const char* throughput_unit_ = "steps/s";
  MonoTime last_throughput_at_{};
  uint64_t reports_ = 0;
  std::map<std::string, std::map<std::string, Series>> series_;
  // Kept so a report costs its own ranks, not the job's (16,384 ranks report 400 times a
  // second): the ranks whose last report pauses (a checkpoint, an evaluation), by node and
  // in all, and the shortest report interval among the nodes. Ingest's alone: readers'
  // copies lack them.
  std::map<std::string, size_t> paused_by_node_;
  size_t paused_ranks_ = 0;
  Millis shortest_report_every_{5'000};
};

}  // namespace trainwatch::jobs
