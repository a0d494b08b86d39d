#include "jobs/pace_findings.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace trainwatch::jobs::rules {
namespace {

double median(std::vector<double> v) {
  // Selection, not a sort: the straggler rule takes the median of 131,072 ranks each beat.
  const size_t n = v.size();
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (n % 2) return *mid;
  return (*std::max_element(v.begin(), mid) + *mid) / 2;
}

}  // namespace

namespace {

// What one rank's progress window says a step cost it, by each measure; -1 when unknown.
struct Cost {
  int rank;
  const RankRecord* r;
  double busy_per_step;  // time to reach the collective (StepCosts::busy_s)
  double wall_per_step;
  double cpu_per_step;
  double window_s;
};

// The three measures of a step's cost, best first (see straggler_findings), and how a
// finding names each.
enum class Measure { kBusy, kWall, kCpu };

double value_of(const Cost& x, Measure m) {
  return m == Measure::kBusy ? x.busy_per_step : m == Measure::kWall ? x.wall_per_step : x.cpu_per_step;
}

// "300.0 ms a step to reach the collective", "30.0 ms of CPU a step", "300.0 ms a step".
std::string cost_text(double seconds, Measure m) {
  return fmt("%.1f ms", seconds * 1000) + (m == Measure::kCpu ? " of CPU" : "") + " a step" +
         (m == Measure::kBusy ? " to reach the collective" : "");
}

// The ranks whose cost by `m` is at least straggler_ratio x the job median; nothing when
// some rank's cost by `m` is unknown.
void judge(const Context& c, const std::vector<Cost>& costs, Measure m, std::vector<Finding>& out) {
  std::vector<double> values;
  values.reserve(costs.size());
  for (const auto& x : costs) {
    if (value_of(x, m) < 0) return;
    values.push_back(value_of(x, m));
  }
  const double med = median(values);
  for (const auto& x : costs) {
    const double v = value_of(x, m);
    if (med <= 0 || v < c.t.straggler_ratio * med || v - med < kStragglerMinExcessS) continue;
    out.push_back({FindingCode::kStraggler,
                   Severity::kWarning,
                   {x.rank},
                   x.r->node,
                   Context::who(x.rank, *x.r) + " is a straggler: " + cost_text(v, m) + ", " +
                       fmt("%.1f", v / med) + "x the job median (" + fmt("%.1f ms", med * 1000) +
                       ") over the last " + fmt("%.0f s", x.window_s),
                   kOrderWarning,
                   c.now});
  }
}

}  // namespace

// A rank slower at its steps than its peers: its cost a step at least straggler_ratio x the
// job median over its progress window. In synchronous data-parallel training every rank's
// step interval equals the slowest one's, so the step interval names nobody; what differs
// is how long each takes to reach the collective, where the others then wait for it. So,
// best first: that time, where the ranks mark their collectives (the agent's samples find
// the others waiting in them and the straggler not); else the wall time a step (ranks that
// do not wait for each other); else the CPU a step, the agent's own threads never counted
// (a waiting rank sleeps in the collective).
void straggler_findings(const Context& c, std::vector<Finding>& out) {
  std::vector<Cost> costs;
  const auto gap = c.job.learned().smoothed_step_gap();
  for (const RankEntry& e : c.ranks) {
    if (!e.running) continue;
    const RankRecord& r = *e.r;
    // Judged at its last report, not now: a verdict comes up to a report interval later.
    if (!r.last_step_at || (gap && r.seen - *r.last_step_at > kStragglerIdleGaps * *gap)) continue;
    const StepCosts& sc = r.costs;
    if (sc.steps < kStragglerMinSteps) continue;
    const auto steps = static_cast<double>(sc.steps);
    costs.push_back({e.rank, &r, sc.busy_known ? sc.busy_s / steps : -1.0, sc.wall_s / steps,
                     sc.cpu_known ? sc.cpu_s / steps : -1.0, sc.wall_s});
  }
  if (costs.size() < 2) return;
  const size_t before = out.size();
  for (Measure m : {Measure::kBusy, Measure::kWall, Measure::kCpu}) {
    judge(c, costs, m, out);
    if (out.size() > before) return;
    // Where the collectives are marked, their time is the truth: a rank that reaches them
    // no later than the others is no straggler, whatever its CPU.
    if (m == Measure::kBusy &&
        std::all_of(costs.begin(), costs.end(), [](const Cost& x) { return x.busy_per_step >= 0; }))
      return;
  }
}

namespace {

// A stall (no window of progress lately): the recent windows, its zeros, against the median
// of the windows in which the job trained before them. Windows of no progress stay out of
// that baseline: were they in, a stall lasting half the history would make the median zero,
// and the warning would clear itself while the job is still stuck.
void stall_drop(const Context& c, const ThroughputHistory& tp, std::vector<Finding>& out) {
  const auto recent = tp.all.end() - static_cast<std::ptrdiff_t>(kThroughputRecent);
  // Recent windows that made progress are also the newest training windows: the baseline
  // is what precedes them.
  const auto recent_training =
      std::count_if(recent, tp.all.end(), [](const ThroughputSample& x) { return x.value > 0; });
  if (tp.training.size() < kThroughputBaseline + static_cast<size_t>(recent_training)) return;
  std::vector<double> baseline;
  for (auto it = tp.training.begin(); it != tp.training.end() - recent_training; ++it)
    baseline.push_back(it->value);
  const double med = median(std::move(baseline));
  for (auto it = recent; it != tp.all.end(); ++it) {
    if (it->value >= c.t.throughput_drop * med) return;
  }
  out.push_back({FindingCode::kThroughputDrop,
                 Severity::kWarning,
                 {},
                 "",
                 "throughput " + fmt("%.3g", tp.all.back().value) + " " + c.job.throughput_unit() +
                     " is below " + fmt("%g", c.t.throughput_drop) + "x the job's recent median (" +
                     fmt("%.3g", med) + ")",
                 kOrderWarning,
                 c.now});
}

// The job steps, slower: the windows of progress over the last kThroughputRecentSpan (at
// least kThroughputRecent of them), averaged, against the median of those before. One
// report window holds a step or three of a jittery job; ten seconds of them do not swing
// by half. No rank stands out (straggler_findings spoke first), so the drop is the job's.
void slowdown_drop(const Context& c, const ThroughputHistory& tp, std::vector<Finding>& out) {
  const auto& w = tp.training;
  size_t recent = 0;
  double sum = 0;
  while (recent < w.size() &&
         (recent < kThroughputRecent || w.back().at - w[w.size() - recent].at < kThroughputRecentSpan)) {
    sum += w[w.size() - 1 - recent].value;
    ++recent;
  }
  if (w.size() < kThroughputBaseline + recent) return;
  std::vector<double> baseline;
  for (size_t i = 0; i + recent < w.size(); ++i) baseline.push_back(w[i].value);
  const double med = median(std::move(baseline));
  const double rate = sum / static_cast<double>(recent);
  if (rate >= c.t.throughput_drop * med) return;
  out.push_back({FindingCode::kThroughputDrop,
                 Severity::kWarning,
                 {},
                 "",
                 "throughput " + fmt("%.3g", rate) + " " + c.job.throughput_unit() + " is below " +
                     fmt("%g", c.t.throughput_drop) + "x the job's recent median (" + fmt("%.3g", med) +
                     "), job-wide: no rank is slower at its steps than the others",
                 kOrderWarning,
                 c.now});
}

}  // namespace

void throughput_findings(const Context& c, const StallSense& stall, std::vector<Finding>& out) {
  const ThroughputHistory tp{c.job.throughput(), c.job.training_throughput()};
  if (tp.all.size() < kThroughputRecent) return;
  if (tp.all.back().value > 0) {
    slowdown_drop(c, tp, out);
    return;
  }
  // No progress: a stall, which the stall rules judge at the soft-hang time. A drop says so
  // then, unless something explains it (a rank evaluating for ranks in a barrier, a warning
  // that names the rank the others wait for).
  if (!stall.stalled_for || *stall.stalled_for <= early_warning_after(c.job.learned().smoothed_step_gap()) ||
      stall.explained)
    return;
  stall_drop(c, tp, out);
}

}  // namespace trainwatch::jobs::rules
