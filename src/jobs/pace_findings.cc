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

// The recent windows as they are, a stall's zeros included, against the median of the
// windows in which the job trained before them. Windows of no progress stay out of that
// baseline: were they in, a stall lasting half the history would make the median zero,
// and the warning would clear itself while the job is still stuck.
void throughput_findings(const Context& c, std::vector<Finding>& out) {
  const auto& tp = c.job.throughput();
  if (tp.size() < kThroughputRecent) return;
  const auto recent = tp.end() - kThroughputRecent;
  // Recent windows that made progress are also the newest training windows: the baseline
  // is what precedes them.
  const auto recent_training = std::count_if(recent, tp.end(), [](double x) { return x > 0; });
  const auto& training = c.job.training_throughput();
  if (training.size() < kThroughputBaseline + static_cast<size_t>(recent_training)) return;
  const double med = median({training.begin(), training.end() - recent_training});
  for (auto it = recent; it != tp.end(); ++it) {
    if (*it >= c.t.throughput_drop * med) return;
  }
  out.push_back({"throughput_drop",
                 Severity::kWarning,
                 {},
                 "",
                 "throughput " + fmt("%.3g", tp.back()) + " " + c.job.throughput_unit() + " is below " +
                     fmt("%g", c.t.throughput_drop) + "x the job's recent median (" + fmt("%.3g", med) + ")",
                 kOrderWarning,
                 c.now});
}

}  // namespace trainwatch::jobs::rules
