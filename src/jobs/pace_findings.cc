#include "jobs/pace_findings.h"

#include <algorithm>
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

// A rank whose cost a step (CPU seconds, or wall seconds when CPU is unknown) is at least
// straggler_ratio x the job median over the progress window. In synchronous data-parallel
// training every rank's step interval equals the slowest one's; the CPU a rank spends
// per step is what differs (waiting ranks sleep in the collective).
void straggler_findings(const Context& c, std::vector<Finding>& out) {
  struct Cost {
    int rank;
    const RankRecord* r;
    double cpu_per_step;  // -1 when unknown
    double wall_per_step;
    double window_s;
  };
  std::vector<Cost> costs;
  const auto gap = c.job.learned().smoothed_step_gap();
  for (const RankEntry& e : c.ranks) {
    if (!e.running) continue;
    const int rank = e.rank;
    const RankRecord& r = *e.r;
    // Judged at its last report, not now: a verdict comes up to a report interval later.
    if (!r.last_step_at || (gap && r.seen - *r.last_step_at > kStragglerIdleGaps * *gap)) continue;
    const StepCosts& sc = r.costs;
    if (sc.steps < kStragglerMinSteps) continue;
    const auto steps = static_cast<double>(sc.steps);
    costs.push_back({rank, &r, sc.cpu_known ? sc.cpu_s / steps : -1.0, sc.wall_s / steps, sc.wall_s});
  }
  if (costs.size() < 2) return;
  auto judge = [&](bool use_cpu) {
    std::vector<double> values;
    for (const auto& x : costs) {
      double v = use_cpu ? x.cpu_per_step : x.wall_per_step;
      if (v < 0) return;
      values.push_back(v);
    }
    const double med = median(values);
    for (const auto& x : costs) {
      double v = use_cpu ? x.cpu_per_step : x.wall_per_step;
      if (med <= 0 || v < c.t.straggler_ratio * med || v - med < kStragglerMinExcessS) continue;
      out.push_back({"straggler",
                     Severity::kWarning,
                     {x.rank},
                     x.r->node,
                     Context::who(x.rank, *x.r) + " is a straggler: " + fmt("%.1f ms", v * 1000) +
                         (use_cpu ? " of CPU" : "") + " a step, " + fmt("%.1f", v / med) +
                         "x the job median (" + fmt("%.1f ms", med * 1000) + ") over the last " +
                         fmt("%.0f s", x.window_s),
                     kOrderWarning,
                     c.now});
    }
  };
  judge(false);
  bool flagged = std::any_of(out.begin(), out.end(), [](const Finding& f) { return f.code == "straggler"; });
  if (!flagged) judge(true);
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
  out.push_back({"throughput_drop",
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
  out.push_back({"throughput_drop",
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
