#include "jobs/stall_findings.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/duration.h"
#include "jobs/barrier_wait.h"
#include "jobs/rank_place.h"
#include "jobs/rank_set.h"

namespace trainwatch::jobs::rules {
namespace {

// The ranks the others wait for while every rank is stopped at one step (rank_place.h),
// with where each group is.
struct Culprit {
  std::vector<int> ranks;
  std::string who;                 // "rank 2 (node-b, pid 7) is", "ranks 2-3 are"
  std::string place;               // "in fetch_next_shard (data.py:31)"
  std::string others;              // "; ranks 0-1 are in all_reduce (train.py:57)"
  bool strict_minority = false;    // fewer than half the running ranks
  bool mismatch = false;           // every rank in a collective, the culprit in another one
  bool others_in_barrier = false;  // the others wait in a barrier: for work they asked of it
};

// The ranks' last reports, as rank_place.h and barrier_wait.h read them.
std::vector<std::pair<int, const RankReport*>> last_reports(
    const std::vector<std::pair<int, const RankRecord*>>& active) {
  std::vector<std::pair<int, const RankReport*>> reports;
  reports.reserve(active.size());
  for (const auto& [rank, r] : active) reports.emplace_back(rank, &r->last);
  return reports;
}

// The last sign that the job moves: `progress` (its last step, or pause), or a rank seen
// coming out of a collective since (barrier_wait.h: left_collective), which only a rank
// whose peers reached it too can do. A warning waits for it, the page does not: a job that
// goes through collectives and never steps still stalls.
MonoTime moved_on(const std::vector<std::pair<int, const RankRecord*>>& active, MonoTime progress) {
  for (const auto& [rank, r] : active) {
    if (r->left_collective_at && *r->left_collective_at > progress) progress = *r->left_collective_at;
  }
  return progress;
}

std::optional<Culprit> stalled_culprit(const Context& c,
                                       const std::vector<std::pair<int, const RankRecord*>>& active) {
  const Whereabouts w = whereabouts(last_reports(active));
  if (!w.culprit) return std::nullopt;
  const PlaceGroup& stuck = w.groups[*w.culprit];
  Culprit out;
  out.ranks = stuck.ranks;
  out.place = stuck.place.text;
  out.strict_minority = 2 * stuck.ranks.size() < active.size();
  out.mismatch = w.mismatch;
  out.others_in_barrier = true;
  if (stuck.ranks.size() == 1) {
    out.who = Context::who(stuck.ranks[0], c.job.ranks().at(stuck.ranks[0])) + " is";
  } else {
    out.who = ranks_phrase(stuck.ranks) + " are";
  }
  for (size_t i = 0; i < w.groups.size(); ++i) {
    if (i == *w.culprit) continue;
    const PlaceGroup& g = w.groups[i];
    out.others += "; " + ranks_phrase(g.ranks) + (g.ranks.size() == 1 ? " is " : " are ") + g.place.text;
    out.others_in_barrier = out.others_in_barrier && is_barrier(g.place);
  }
  return out;
}

// Every rank in a collective, in more than one, and no place fewer ranks share than the
// others: the mismatch is certain, the ranks that went astray are not.
//   "a collective mismatch at step 39: ranks 0-1 are in broadcast (train.py:80); ranks 2-3
//    are in all_reduce (train.py:72)"
std::optional<std::string> mismatch_without_culprit(
    const std::vector<std::pair<int, const RankRecord*>>& active, int64_t step) {
  const Whereabouts w = whereabouts(last_reports(active));
  if (!w.mismatch || w.culprit) return std::nullopt;
  std::string text = "a collective mismatch at step " + std::to_string(step) + ":";
  for (size_t i = 0; i < w.groups.size(); ++i) {
    const PlaceGroup& g = w.groups[i];
    text += std::string(i == 0 ? " " : "; ") + ranks_phrase(g.ranks) +
            (g.ranks.size() == 1 ? " is " : " are ") + g.place.text;
  }
  return text;
}

// Every rank stopped at one step: when their places name the rank the others wait for,
// that rank is the finding, with where it is and where the others are; when every rank is
// in a collective but the culprit in another one, the finding is the mismatch:
//   "rank 1 (node-a, pid 7) is in broadcast (train.py:80), a collective mismatch at step 39:
//    no step for 1m (step timeout 1m); ranks 0,2-3 are in all_reduce (train.py:72)"
bool stuck_rank_finding(const Context& c, const std::vector<std::pair<int, const RankRecord*>>& active,
                        int64_t step, MonoTime progress, const std::string& timeout_text, Millis step_timeout,
                        std::vector<Finding>& out) {
  auto culprit = stalled_culprit(c, active);
  if (!culprit) {
    auto mismatch = mismatch_without_culprit(active, step);
    if (!mismatch) return false;
    std::vector<int> ranks;
    ranks.reserve(active.size());
    for (const auto& [rank, r] : active) ranks.push_back(rank);
    out.push_back({FindingCode::kCollectiveMismatch, Severity::kDown, ranks, "",
                   *mismatch + ": no step for " + ago(c.now, progress) + timeout_text, kOrderStalled,
                   progress + step_timeout, progress});
    return true;
  }
  const std::string head = culprit->mismatch
                               ? culprit->who + " " + culprit->place + ", a collective mismatch at step "
                               : culprit->who + " stuck " + culprit->place + " at step ";
  std::string message =
      head + std::to_string(step) + ": no step for " + ago(c.now, progress) + timeout_text + culprit->others;
  out.push_back({culprit->mismatch ? FindingCode::kCollectiveMismatch : FindingCode::kRankStuck,
                 Severity::kDown, culprit->ranks, "", message, kOrderStalled, progress + step_timeout,
                 progress});
  return true;
}

// Before the step timeout pages: once the job has made no step for early_warning_after()
// and the places show a strict minority of ranks outside where the others wait (or in
// another collective than theirs), those ranks are named in a warning the job's channels
// receive (never a page: a long step that ends on its own is a false alarm a warning may
// be, a page may not). Ranks that wait in a barrier wait for work they asked of the one
// that is not there (rank 0 evaluating, logging, writing what only it writes): that is a
// phase of the job, not a suspect, told by their stacks or, before any stack comes, by their
// collective marks (barrier_wait.h); the step timeout, learned from the gaps the job has
// shown, still pages if it never ends.
void early_culprit_finding(const Context& c, const std::vector<std::pair<int, const RankRecord*>>& active,
                           int64_t step, MonoTime progress, Millis step_timeout, std::vector<Finding>& out) {
  const Millis after = early_warning_after(c.job.learned().smoothed_step_gap());
  if (after >= step_timeout || c.now - moved_on(active, progress) <= after) return;
  if (paused_at_barrier(last_reports(active))) return;
  auto culprit = stalled_culprit(c, active);
  if (!culprit || !culprit->strict_minority) return;
  if (culprit->others_in_barrier && !culprit->mismatch) return;
  const std::string head =
      culprit->mismatch ? culprit->who + " " + culprit->place + ", likely a collective mismatch at step "
                        : culprit->who + " likely stuck " + culprit->place + " at step ";
  std::string message = head + std::to_string(step) + ": no step for " + ago(c.now, progress) +
                        culprit->others + " (a page follows at the " + format_duration(step_timeout) +
                        " step timeout if no step comes)";
  Finding f{culprit->mismatch ? FindingCode::kCollectiveMismatch : FindingCode::kRankSuspected,
            Severity::kWarning,
            culprit->ranks,
            "",
            message,
            kOrderStalled,
            progress + after,
            progress};
  f.notify = true;
  out.push_back(std::move(f));
}

// " in all_reduce (train.py:57)" when every rank whose place is known is in the same one.
std::string shared_place(const std::vector<std::pair<int, const RankRecord*>>& active) {
  const Whereabouts w = whereabouts(last_reports(active));
  return w.groups.size() == 1 ? " " + w.groups.front().place.text : "";
}

}  // namespace

// No rank advanced within the step timeout, or one rank lags while others advance.
void stall_findings(const Context& c, bool starting, Millis step_timeout, bool learned,
                    std::vector<Finding>& out) {
  std::optional<MonoTime> newest;
  std::vector<std::pair<int, const RankRecord*>> active;
  for (const RankEntry& e : c.ranks) {
    if (!e.running) continue;
    active.emplace_back(e.rank, e.r);
    if (e.r->last_step_at && (!newest || *e.r->last_step_at > *newest)) newest = *e.r->last_step_at;
  }
  if (active.empty()) return;
  if (starting) {
    auto since = c.job.attempt_started().value_or(c.now);
    if (c.now - since <= c.t.startup_timeout) return;
    std::vector<int> ranks;
    ranks.reserve(active.size());
    for (const auto& [rank, r] : active) ranks.push_back(rank);
    out.push_back({FindingCode::kStartupStuck, Severity::kDown, ranks, "",
                   ranks_phrase(ranks) + " made too few steps in " + ago(c.now, since) +
                       " of start-up (start-up timeout " + format_duration(c.t.startup_timeout) + ")",
                   kOrderStartup, since + c.t.startup_timeout, since});
    return;
  }
  MonoTime progress = newest.value_or(c.now);
  if (auto pause = c.job.last_pause_activity(); pause && *pause > progress) progress = *pause;
  const std::string timeout_text =
      " (step timeout " + format_duration(step_timeout) + (learned ? ", learned" : "") + ")";
  int64_t min_step = INT64_MAX, max_step = -1;
  for (const auto& [rank, r] : active) {
    min_step = std::min(min_step, r->last.step);
    max_step = std::max(max_step, r->last.step);
  }
  std::vector<int> behind;
  for (const auto& [rank, r] : active) {
    if (r->last.step == min_step) behind.push_back(rank);
  }
  if (c.now - progress > step_timeout) {
    std::string message;
    if (min_step == max_step) {
      if (stuck_rank_finding(c, active, min_step, progress, timeout_text, step_timeout, out)) return;
      message = "all running ranks (" + format_rank_set(behind) + ") stuck at step " +
                std::to_string(min_step) + shared_place(active) + ": no step for " + ago(c.now, progress) +
                timeout_text;
    } else {
      std::string detail;
      if (behind.size() == 1) {
        const RankRecord& r = c.job.ranks().at(behind[0]);
        detail = Context::who(behind[0], r);
      } else {
        detail = ranks_phrase(behind);
      }
      message = detail + " furthest behind at step " + std::to_string(min_step) + " (others at step " +
                std::to_string(max_step) + "): no rank advanced for " + ago(c.now, progress) + timeout_text;
    }
    out.push_back({FindingCode::kJobStalled, Severity::kDown, behind, "", message, kOrderStalled,
                   progress + step_timeout, progress});
    return;
  }
  if (min_step == max_step) early_culprit_finding(c, active, min_step, progress, step_timeout, out);
  // One rank stuck while the others advance (asynchronous work, or not yet blocked on it).
  // A rank level with the furthest is not behind anyone: it made its step before the
  // others made theirs, and if they all stop there the whole-job stall above names it.
  for (const auto& [rank, r] : active) {
    if (r->last.step == max_step) continue;
    if (!r->last_step_at || c.now - *r->last_step_at <= step_timeout || c.rank(rank)->node_overdue) continue;
    out.push_back({FindingCode::kRankHung,
                   Severity::kDown,
                   {rank},
                   r->node,
                   Context::who(rank, *r) + " has made no step for " + ago(c.now, *r->last_step_at) +
                       " at step " + std::to_string(r->last.step) + " while others reached step " +
                       std::to_string(max_step) + timeout_text,
                   kOrderHung,
                   *r->last_step_at + step_timeout,
                   *r->last_step_at});
  }
}

StallSense stall_sense(const Context& c) {
  StallSense sense;
  std::optional<MonoTime> newest;
  std::vector<std::pair<int, const RankRecord*>> active;
  for (const RankEntry& e : c.ranks) {
    if (!e.running) continue;
    active.emplace_back(e.rank, e.r);
    if (evaluating(e.r->last)) sense.explained = true;
    if (e.r->last_step_at && (!newest || *e.r->last_step_at > *newest)) newest = *e.r->last_step_at;
  }
  if (newest) sense.stalled_for = std::chrono::duration_cast<Millis>(c.now - moved_on(active, *newest));
  if (!sense.explained) {
    auto culprit = stalled_culprit(c, active);
    sense.explained = (culprit && culprit->others_in_barrier && !culprit->mismatch) ||
                      paused_at_barrier(last_reports(active));
  }
  return sense;
}

}  // namespace trainwatch::jobs::rules
