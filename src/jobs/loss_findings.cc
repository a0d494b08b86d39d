#include "jobs/loss_findings.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "jobs/rank_set.h"

namespace trainwatch::jobs::rules {
namespace {

// One finding for all the ranks in a streak of NaN or infinite losses now, naming the rank whose
// run of them began first: the earliest first step, then the earliest time that step was
// seen, then the lowest rank. In data-parallel training a NaN spreads to every rank through
// the next all-reduce, so the rank that went bad first is the cause and the others
// followed; when each node's report arrived says nothing about that, so it never decides.
// Example: rank 2 reports NaN from step 120, ranks 0-1 and 3 from step 121 ->
//   "rank 2 (node-b, pid 7) has reported non-finite losses since step 120 (12:03:11 UTC):
//    14 so far, NaN at step 133; ranks 0-1,3 followed from step 121"
Finding nonfinite_finding(const Context& c, std::vector<RankRef> bad) {
  auto first_step = [](const RankRecord& r) { return r.nonfinite_first_step.value_or(r.last.step); };
  auto first_at = [](const RankRecord& r) { return r.nonfinite_first_at.value_or(r.seen); };
  std::sort(bad.begin(), bad.end(), [&](const RankRef& a, const RankRef& b) {
    return std::tuple(first_step(*a.second), first_at(*a.second), a.first) <
           std::tuple(first_step(*b.second), first_at(*b.second), b.first);
  });
  const auto& [rank, r] = bad.front();
  std::string message = Context::who(rank, *r) + " has reported non-finite losses since step " +
                        std::to_string(first_step(*r)) + " (" + clock_time(c.wall(first_at(*r))) + "): ";
  if (r->last.nonfinite_total) message += std::to_string(*r->last.nonfinite_total) + " so far, ";
  message += number_text(*r->last.loss) + Context::at_step(*r);
  if (bad.size() > 1) {
    std::vector<int> others;
    int64_t from = INT64_MAX;
    for (size_t i = 1; i < bad.size(); ++i) {
      others.push_back(bad[i].first);
      from = std::min(from, first_step(*bad[i].second));
    }
    message += "; " + ranks_phrase(others) + " followed from step " + std::to_string(from);
  }
  return {
      FindingCode::kLossNotFinite, Severity::kDown, {rank}, r->node, message, kOrderNumbers, first_at(*r)};
}

// A run shorter than a streak, or one that has ended: a warning on the job's page while the
// run is recent, never a page. One bad batch makes a NaN that the optimiser skips or the
// next step washes out; only a run that goes on means the weights themselves went bad.
//   "rank 0 (node-a, pid 7) reported a non-finite loss at step 57 (12:03:11 UTC): NaN, 1 in
//    a row so far (a page follows at 5 in a row)"
//   "rank 0 (node-a, pid 7) reported non-finite losses from step 57 (12:03:11 UTC), 1 in
//    all, and trains on with finite losses since"
std::optional<Finding> short_run_finding(const Context& c, int rank, const RankRecord& r, uint64_t run) {
  const RankReport& l = r.last;
  if (!r.nonfinite_first_at || !l.nonfinite_total || *l.nonfinite_total == 0) return std::nullopt;
  if (run == 0 && c.now - *r.nonfinite_first_at > kNonfiniteNoticeFor) return std::nullopt;
  const std::string first = std::to_string(r.nonfinite_first_step.value_or(l.step));
  const std::string when = clock_time(c.wall(*r.nonfinite_first_at));
  std::string message = Context::who(rank, r);
  if (run > 0) {
    message += " reported a non-finite loss at step " + first + " (" + when + "): " + number_text(*l.loss) +
               ", " + std::to_string(run) + " in a row so far (a page follows at " +
               std::to_string(kNonfiniteStreak) + " in a row)";
  } else {
    message += " reported non-finite losses from step " + first + " (" + when + "), " +
               std::to_string(*l.nonfinite_total) + " in all, and trains on with finite losses since";
  }
  return Finding{FindingCode::kLossNotFinite, Severity::kWarning, {rank}, r.node, message, kOrderWarning,
                 *r.nonfinite_first_at};
}

}  // namespace

uint64_t nonfinite_run(const RankRecord& r) {
  const RankReport& l = r.last;
  if (!l.loss || std::isfinite(*l.loss)) return 0;
  if (l.nonfinite_run) return *l.nonfinite_run;
  if (!l.nonfinite_total) return kNonfiniteStreak;
  const int64_t first = r.nonfinite_first_step.value_or(l.step);
  return static_cast<uint64_t>(std::max<int64_t>(1, l.step - first + 1));
}

void loss_findings(const Context& c, const std::vector<RankRef>& running, std::vector<Finding>& out) {
  std::vector<RankRef> streaks;
  for (const auto& [rank, r] : running) {
    const uint64_t run = nonfinite_run(*r);
    if (run >= kNonfiniteStreak) {
      streaks.emplace_back(rank, r);
    } else if (auto f = short_run_finding(c, rank, *r, run)) {
      out.push_back(std::move(*f));
    }
  }
  if (!streaks.empty()) out.push_back(nonfinite_finding(c, std::move(streaks)));
}

}  // namespace trainwatch::jobs::rules
