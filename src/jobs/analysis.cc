#include "jobs/analysis.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "core/duration.h"
#include "core/rank_rule.h"
#include "core/time_format.h"
#include "jobs/gpu_findings.h"
#include "jobs/rank_place.h"
#include "jobs/rank_set.h"

namespace trainwatch::jobs {
namespace {

// Attribution order of each kind of down finding (see analysis.h).
enum Order : int {
  // A fault of the node's hardware (jobs/gpu_findings.h: a GPU off the bus, an XID that
  // needs a reset, a link down) explains the ranks that vanished or failed with it.
  kOrderHardware = 90,
  kOrderGone = 100,
  kOrderNodeSilent = 200,
  kOrderStopped = 300,
  kOrderHung = 350,
  kOrderStalled = 400,
  kOrderStartup = 450,
  kOrderNumbers = 500,
  kOrderCheckpoint = 550,
  kOrderFailed = 700,
  kOrderMissing = 800,
  kOrderRestarting = 900,
  kOrderWarning = 1000,
};

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string ago(MonoTime now, MonoTime then) {
  return format_duration(std::chrono::duration_cast<Millis>(now - then));
}

std::string number_text(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt("%g", v);
}

// Exited with code 0 once gone: finished, whatever its last status said (core/rank_rule.h).
bool exited_ok(const RankReport& r) { return !r.alive && r.exit && r.exit->code == 0; }

bool finished(const RankReport& r) { return r.status == RankStatus::kFinished || exited_ok(r); }

bool done(const RankReport& r) { return finished(r) || r.status == RankStatus::kFailed; }

bool in_checkpoint(const RankReport& r) {
  return r.status == RankStatus::kCheckpointing || r.checkpoint.state == CheckpointState::kInProgress;
}

// How long the rank had gone without a step when its node sent its last report. Unlike
// `now - last step`, this does not grow while the server waits for the next report, so
// it is evidence of the rank itself, not of the age of the news.
std::optional<Millis> no_step_at_report(const RankRecord& r) {
  if (!r.last_step_at) return std::nullopt;
  return std::chrono::duration_cast<Millis>(r.seen - *r.last_step_at);
}

// One rank as an analysis sees it: its record, and what its node's last report says,
// looked up once. Every pass below asks about each rank's node; looking it up each time
// in the job's ordered map of nodes, and walking its ordered map of ranks, was over half
// of an analysis of 16,384 ranks (bench/jobs/analysis_bench.cc).
struct RankEntry {
  int rank;
  const RankRecord* r;
  bool node_silent;   // Context::silent
  bool node_overdue;  // Context::overdue
  bool running;       // not done, not gone, on a node that still reports and has not said goodbye
};

class Context {
 public:
  Context(const JobState& of, const JobThresholds& thresholds, MonoTime at, SystemTime wall_at)
      : job(of), t(thresholds), now(at), wall_now(wall_at) {
    nodes_.reserve(job.nodes().size());
    for (const auto& [name, n] : job.nodes()) nodes_.emplace(name, &n);
    ranks.reserve(job.ranks().size());
    // A node's ranks are mostly neighbours: its facts are looked up once for a run of them.
    const std::string* of_node = nullptr;
    bool node_silent = false, node_overdue = false, node_final = false;
    for (const auto& [rank, r] : job.ranks()) {
      if (of_node == nullptr || *of_node != r.node) {
        of_node = &r.node;
        const NodeRecord* n = node(r.node);
        node_silent = n != nullptr && silent(*n);
        node_overdue = n != nullptr && overdue(*n);
        // A rank left alive by its node's final report is unwatched, not running: its step
        // and state froze with that report, so no timeout may read them as a hang.
        node_final = n != nullptr && n->final;
      }
      ranks.push_back({rank, &r, node_silent, node_overdue,
                       r.last.alive && !done(r.last) && !node_silent && !node_final});
    }
  }

  const JobState& job;
  const JobThresholds& t;
  const MonoTime now;
  const SystemTime wall_now;
  std::vector<RankEntry> ranks;  // in rank order

  const NodeRecord* node(const std::string& name) const {
    auto it = nodes_.find(name);
    return it == nodes_.end() ? nullptr : it->second;
  }
  const RankEntry* rank(int rank) const {
    auto it = std::lower_bound(ranks.begin(), ranks.end(), rank,
                               [](const RankEntry& e, int wanted) { return e.rank < wanted; });
    return it != ranks.end() && it->rank == rank ? &*it : nullptr;
  }

  SystemTime wall(MonoTime at) const {
    return wall_now - std::chrono::duration_cast<SystemTime::duration>(now - at);
  }

  Millis silent_after(const NodeRecord& n) const {
    return t.node_silent_after.value_or(Millis(n.report_every.count() * t.missed_reports));
  }
  bool silent(const NodeRecord& n) const { return !n.final && now - n.last_seen > silent_after(n); }
  // Overdue: its last report is older than one and a half intervals. Its ranks' progress is
  // stale, so it is not evidence that they hung; silence (later) speaks for them.
  bool overdue(const NodeRecord& n) const { return !n.final && now - n.last_seen > n.report_every * 3 / 2; }

  RankFacts facts(const RankRecord& r) const {
    RankFacts f;
    f.alive = r.last.alive;
    f.finished = r.last.status == RankStatus::kFinished;
    f.failed = r.last.status == RankStatus::kFailed;
    f.exited_ok = exited_ok(r.last);
    f.checkpointing = r.last.status == RankStatus::kCheckpointing;
    f.state = r.last.state;
    if (r.last_step_at) f.no_step_for = std::chrono::duration_cast<Millis>(now - *r.last_step_at);
    return f;
  }

  // "rank 5 (node-2, pid 41231)"
  static std::string who(int rank, const RankRecord& r) {
    return "rank " + std::to_string(rank) + " (" + r.node + ", pid " + std::to_string(r.last.pid) + ")";
  }
  static std::string at_step(const RankRecord& r) {
    return r.last.step >= 0 ? " at step " + std::to_string(r.last.step) : " before its first step";
  }

 private:
  std::unordered_map<std::string_view, const NodeRecord*> nodes_;  // the job's, by name
};

// How long a rank that failed on a broken connection (failed_on_a_peer) leaves the verdict
// undecided: the dead peer's agent sees it gone within a sample (200 ms) and reports it
// within kMinPushGap more; a second covers the network and a late sample.
constexpr Millis kPeerFailureGrace{2'000};

// Whether the head finding's rank failed on a collective's broken connection: the error a
// rank gets when a peer died (gloo, NCCL, torch.distributed's own).
bool failed_on_a_peer(const Context& c, const Finding& head) {
  static constexpr std::array<std::string_view, 7> kPeerErrors{"Connection closed by peer",
                                                               "Connection reset by peer",
                                                               "/gloo/transport/",
                                                               "ncclRemoteError",
                                                               "remote process exited",
                                                               "DistNetworkError",
                                                               "NCCL communicator was aborted"};
  if (head.ranks.empty()) return false;
  auto it = c.job.ranks().find(head.ranks.front());
  if (it == c.job.ranks().end()) return false;
  const std::string& error = it->second.last.error;
  return std::any_of(kPeerErrors.begin(), kPeerErrors.end(),
                     [&](std::string_view e) { return error.find(e) != std::string::npos; });
}

using RankRef = std::pair<int, const RankRecord*>;

// One finding for all the ranks whose loss is NaN or infinite now, naming the rank whose
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
  return {"loss_not_finite", Severity::kDown, {rank}, r->node, message, kOrderNumbers, first_at(*r)};
}

// The finding of a rank the shared rule (core/rank_rule.h) does not call running: gone,
// failed, stopped or blocked. Returns whether the rank still runs (a blocked or stopped
// rank does: its numbers are judged too).
bool ruling_findings(const Context& c, int rank, const RankRecord& r, std::vector<Finding>& out) {
  const RankReport& l = r.last;
  // The agent's /health judges the same facts by the same rule (core/rank_rule.h).
  const RankRuling ruling = rule_rank(c.facts(r));
  const std::string code(ruling_code(ruling));
  switch (ruling) {
    case RankRuling::kGone:
      out.push_back({code,
                     Severity::kDown,
                     {rank},
                     r.node,
                     c.who(rank, r) + (l.exit ? " " + describe_exit(*l.exit) : " vanished") + c.at_step(r) +
                         " while " + std::string(to_string(l.status)) + ", without reporting an error" +
                         (l.exit ? "" : " (exit status unknown to the agent)"),
                     kOrderGone,
                     r.gone_at.value_or(r.seen)});
      return false;
    case RankRuling::kFailed:
      out.push_back({code,
                     Severity::kDown,
                     {rank},
                     r.node,
                     c.who(rank, r) + " failed" + c.at_step(r) + (l.error.empty() ? "" : ": " + l.error),
                     kOrderFailed,
                     r.error_at.value_or(r.seen)});
      return false;
    case RankRuling::kDone: return false;
    case RankRuling::kStopped:
      out.push_back(
          {code,
           Severity::kDown,
           {rank},
           r.node,
           c.who(rank, r) + " is stopped (process state " + std::string(1, l.state) + ")" + c.at_step(r),
           kOrderStopped,
           r.last_step_at.value_or(r.seen)});
      break;
    case RankRuling::kBlocked:
    case RankRuling::kBlockedCheckpointing: {
      const bool down = ruling == RankRuling::kBlocked;
      out.push_back({code,
                     down ? Severity::kDown : Severity::kWarning,
                     {rank},
                     r.node,
                     c.who(rank, r) + " is in uninterruptible sleep (process state D) with no step for " +
                         ago(c.now, *r.last_step_at) + c.at_step(r) + (down ? "" : " while checkpointing"),
                     down ? kOrderStopped : kOrderWarning,
                     *r.last_step_at});
      break;
    }
    case RankRuling::kRunning: break;
  }
  return true;
}

// fp16 overflow streaks, a loss scale stuck at its minimum, a failed checkpoint write.
void overflow_and_checkpoint_findings(const Context& c, int rank, const RankRecord& r,
                                      std::vector<Finding>& out) {
  const RankReport& l = r.last;
  if (l.overflow_consecutive >= static_cast<uint64_t>(c.t.overflow_streak)) {
    out.push_back({"overflow_streak",
                   Severity::kDown,
                   {rank},
                   r.node,
                   c.who(rank, r) + " skipped " + std::to_string(l.overflow_consecutive) +
                       " steps in a row on fp16 overflow" + c.at_step(r) +
                       (l.loss_scale ? " (loss scale " + number_text(*l.loss_scale) + ")" : ""),
                   kOrderNumbers + 1,
                   r.seen});
  } else if (l.loss_scale && *l.loss_scale <= c.t.min_loss_scale && l.overflow_consecutive > 0) {
    out.push_back({"loss_scale_min",
                   Severity::kDown,
                   {rank},
                   r.node,
                   c.who(rank, r) + " loss scale is at its minimum (" + number_text(*l.loss_scale) +
                       ") and still overflowing" + c.at_step(r),
                   kOrderNumbers + 2,
                   r.seen});
  }
  if (l.checkpoint.state == CheckpointState::kFailed) {
    out.push_back({"checkpoint_failed",
                   Severity::kDown,
                   {rank},
                   r.node,
                   c.who(rank, r) + " failed to write the checkpoint of step " +
                       std::to_string(l.checkpoint.step) + (l.error.empty() ? "" : ": " + l.error),
                   kOrderCheckpoint + 1,
                   r.seen});
  }
}

void rank_findings(const Context& c, std::vector<Finding>& out) {
  std::vector<RankRef> nonfinite;
  for (const RankEntry& e : c.ranks) {
    if (e.node_silent) continue;  // node_silent speaks for it
    const RankRecord& r = *e.r;
    if (!ruling_findings(c, e.rank, r, out)) continue;
    if (r.last.loss && !std::isfinite(*r.last.loss)) nonfinite.emplace_back(e.rank, &r);
    overflow_and_checkpoint_findings(c, e.rank, r, out);
  }
  if (!nonfinite.empty()) out.push_back(nonfinite_finding(c, std::move(nonfinite)));
}

void checkpoint_findings(const Context& c, const LearnedTimeouts::Timeout& timeout,
                         std::vector<Finding>& out) {
  for (const RankEntry& e : c.ranks) {
    if (!e.running || !e.r->checkpoint_begin_at) continue;
    const int rank = e.rank;
    const RankRecord& r = *e.r;
    if (c.now - *r.checkpoint_begin_at <= timeout.value) continue;
    out.push_back({"checkpoint_too_long",
                   Severity::kDown,
                   {rank},
                   r.node,
                   c.who(rank, r) + " has been writing the checkpoint of step " +
                       std::to_string(r.last.checkpoint.step) + " for " + ago(c.now, *r.checkpoint_begin_at) +
                       " (checkpoint timeout " + format_duration(timeout.value) +
                       (timeout.learned ? ", learned" : "") + ")",
                   kOrderCheckpoint,
                   *r.checkpoint_begin_at});
  }
  auto interval = c.job.checkpoint_interval();
  auto last_ok = c.job.last_ok_checkpoint_at();
  if (interval && last_ok && c.now - *last_ok > 2 * *interval) {
    out.push_back({"checkpoint_overdue",
                   Severity::kWarning,
                   {},
                   "",
                   "the last good checkpoint is " + ago(c.now, *last_ok) +
                       " old, more than twice the observed interval (" + format_duration(*interval) + ")",
                   kOrderWarning,
                   *last_ok + 2 * *interval});
  }
}

// The ranks the others wait for while every rank is stopped at one step (rank_place.h),
// with where each group is.
struct Culprit {
  std::vector<int> ranks;
  std::string who;               // "rank 2 (node-b, pid 7) is", "ranks 2-3 are"
  std::string place;             // "in fetch_next_shard (data.py:31)"
  std::string others;            // "; ranks 0-1 are in all_reduce (train.py:57)"
  bool strict_minority = false;  // fewer than half the running ranks
};

std::optional<Culprit> stalled_culprit(const Context& c,
                                       const std::vector<std::pair<int, const RankRecord*>>& active) {
  std::vector<std::pair<int, const RankReport*>> reports;
  reports.reserve(active.size());
  for (const auto& [rank, r] : active) reports.emplace_back(rank, &r->last);
  const Whereabouts w = whereabouts(reports);
  if (!w.culprit) return std::nullopt;
  const PlaceGroup& stuck = w.groups[*w.culprit];
  Culprit out;
  out.ranks = stuck.ranks;
  out.place = stuck.place.text;
  out.strict_minority = 2 * stuck.ranks.size() < active.size();
  if (stuck.ranks.size() == 1) {
    out.who = Context::who(stuck.ranks[0], c.job.ranks().at(stuck.ranks[0])) + " is";
  } else {
    out.who = ranks_phrase(stuck.ranks) + " are";
  }
  for (size_t i = 0; i < w.groups.size(); ++i) {
    if (i == *w.culprit) continue;
    const PlaceGroup& g = w.groups[i];
    out.others += "; " + ranks_phrase(g.ranks) + (g.ranks.size() == 1 ? " is " : " are ") + g.place.text;
  }
  return out;
}

// Every rank stopped at one step: when their places name the rank the others wait for,
// that rank is the finding, with where it is and where the others are.
bool stuck_rank_finding(const Context& c, const std::vector<std::pair<int, const RankRecord*>>& active,
                        int64_t step, MonoTime progress, const std::string& timeout_text, Millis step_timeout,
                        std::vector<Finding>& out) {
  auto culprit = stalled_culprit(c, active);
  if (!culprit) return false;
  std::string message = culprit->who + " stuck " + culprit->place + " at step " + std::to_string(step) +
                        ": no step for " + ago(c.now, progress) + timeout_text + culprit->others;
  out.push_back({"rank_stuck", Severity::kDown, culprit->ranks, "", message, kOrderStalled,
                 progress + step_timeout, progress});
  return true;
}

// Before the step timeout pages: once the job has made no step for early_warning_after()
// and the places show a strict minority of ranks outside where the others wait, those
// ranks are named in a warning the job's channels receive (never a page: a long step
// that ends on its own is a false alarm a warning may be, a page may not).
void early_culprit_finding(const Context& c, const std::vector<std::pair<int, const RankRecord*>>& active,
                           int64_t step, MonoTime progress, Millis step_timeout, std::vector<Finding>& out) {
  const Millis after = early_warning_after(c.job.learned().smoothed_step_gap());
  if (after >= step_timeout || c.now - progress <= after) return;
  auto culprit = stalled_culprit(c, active);
  if (!culprit || !culprit->strict_minority) return;
  std::string message = culprit->who + " likely stuck " + culprit->place + " at step " +
                        std::to_string(step) + ": no step for " + ago(c.now, progress) + culprit->others +
                        " (a page follows at the " + format_duration(step_timeout) +
                        " step timeout if no step comes)";
  Finding f{"rank_suspected", Severity::kWarning, culprit->ranks,   "",
            message,          kOrderStalled,      progress + after, progress};
  f.notify = true;
  out.push_back(std::move(f));
}

// " in all_reduce (train.py:57)" when every rank whose place is known is in the same one.
std::string shared_place(const std::vector<std::pair<int, const RankRecord*>>& active) {
  std::vector<std::pair<int, const RankReport*>> reports;
  reports.reserve(active.size());
  for (const auto& [rank, r] : active) reports.emplace_back(rank, &r->last);
  const Whereabouts w = whereabouts(reports);
  return w.groups.size() == 1 ? " " + w.groups.front().place.text : "";
}

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
    out.push_back({"startup_stuck", Severity::kDown, ranks, "",
                   ranks_phrase(ranks) + " made too few steps in " + ago(c.now, since) +
                       " of start-up (start-up timeout " + format_duration(c.t.startup_timeout) + ")",
                   kOrderStartup, since + c.t.startup_timeout, since});
    return;
  }
  MonoTime progress = newest.value_or(c.now);
  if (auto ck = c.job.last_checkpoint_activity(); ck && *ck > progress) progress = *ck;
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
    out.push_back({"job_stalled", Severity::kDown, behind, "", message, kOrderStalled,
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
    out.push_back({"rank_hung",
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

// Ranks of other nodes that went on stepping after a silent node's last report.
struct PeerAdvance {
  std::string phrase;  // ranks_phrase of those ranks
  size_t count = 0;
  int64_t lowest_step = INT64_MAX;
};

// The lowest two values of a measure over nodes, each from a different node: the lowest
// over every node but any one of them, without a walk per node left out.
template <typename T>
class LowestTwo {
 public:
  void add(const std::string& node, T value) {
    if (first_.node == nullptr || value < first_.value) {
      second_ = first_;
      first_ = {&node, value};
    } else if (second_.node == nullptr || value < second_.value) {
      second_ = {&node, value};
    }
  }
  // The lowest over the nodes other than `node`; nullopt when there is none.
  std::optional<T> except(const std::string& node) const {
    const Entry& e = first_.node != nullptr && *first_.node != node ? first_ : second_;
    if (e.node == nullptr) return std::nullopt;
    return e.value;
  }

 private:
  struct Entry {
    const std::string* node = nullptr;
    T value{};
  };
  Entry first_, second_;
};

// In a synchronous job no rank completes a step without every other, so peers that went
// on stepping after a silent node's last report carried its ranks with them: the node
// lost its agent (killed, out of memory), not its ranks. Each running rank on another,
// fresh (not overdue) node must show it by its own node's last report, and at least one
// must: a step past the highest the silent node's ranks last reported, made after that
// report, and still stepping, with no step for at most its node's report interval (or
// two step gaps, where steps are slower). That last bar tells a lost agent from a dead
// node: the peers of a dead node hang in their next collective, so by the time it counts
// as silent (missed_reports intervals) their reports show more than an interval without
// a step, while a pause shorter than an interval does not page.
// What that rule asks of every running rank on a fresh (not overdue) node, gathered once
// per analysis and by node: a job of 16,384 nodes may have thousands silent at once (a
// switch down, the server itself overloaded), and a walk of 131,072 ranks for each of them
// made one analysis take minutes, during which no report could be applied.
class PeerProgress {
 public:
  explicit PeerProgress(const Context& c) {
    const Millis two_gaps = 2 * c.job.learned().smoothed_step_gap().value_or(Millis{0});
    std::map<std::string_view, ByNode> nodes;
    for (const RankEntry& e : c.ranks) {
      if (!e.running || e.node_overdue) continue;
      const RankRecord& r = *e.r;
      ByNode& n = nodes[r.node];
      n.name = &r.node;
      ++n.count;
      ranks_.emplace_back(e.rank, &r.node);
      const NodeRecord* node = c.node(r.node);
      const auto idle = no_step_at_report(r);
      if (node == nullptr || !idle || *idle > std::max(node->report_every, two_gaps)) {
        n.stalled = true;
        continue;
      }
      n.oldest_step_at = std::min(n.oldest_step_at, *r.last_step_at);
      n.lowest_step = std::min(n.lowest_step, r.last.step);
    }
    for (const auto& [name, n] : nodes) {
      counts_[name] = n.count;
      if (n.stalled) stalled_.push_back(n.name);
      oldest_step_at_.add(*n.name, n.oldest_step_at);
      lowest_step_.add(*n.name, n.lowest_step);
    }
    std::vector<int> all;
    all.reserve(ranks_.size());
    for (const auto& [rank, node] : ranks_) all.push_back(rank);
    phrase_ = ranks_phrase(all);
  }

  // The rule for the silent node `silent`, whose ranks last reported step `step_then` in
  // its report at `last_seen`.
  std::optional<PeerAdvance> advanced(const std::string& silent, MonoTime last_seen,
                                      int64_t step_then) const {
    // A rank elsewhere without a step for too long: the peers may hang with the node.
    if (stalled_.size() > 1 || (stalled_.size() == 1 && *stalled_[0] != silent)) return std::nullopt;
    auto own = counts_.find(silent);
    const size_t own_count = own == counts_.end() ? 0 : own->second;
    if (ranks_.size() == own_count) return std::nullopt;  // no peer to speak for it
    const auto oldest = oldest_step_at_.except(silent);
    const auto lowest = lowest_step_.except(silent);
    if (!oldest || !lowest || *oldest <= last_seen || *lowest <= step_then) return std::nullopt;
    PeerAdvance peers;
    peers.lowest_step = *lowest;
    peers.count = ranks_.size() - own_count;
    if (own_count == 0) {
      peers.phrase = phrase_;
    } else {  // a silent node not yet overdue (node_silent_after under 1.5 intervals)
      std::vector<int> others;
      for (const auto& [rank, node] : ranks_) {
        if (*node != silent) others.push_back(rank);
      }
      peers.phrase = ranks_phrase(others);
    }
    return peers;
  }

 private:
  struct ByNode {
    const std::string* name = nullptr;
    size_t count = 0;
    bool stalled = false;  // a rank without a step for longer than the bar, or on an unknown node
    MonoTime oldest_step_at = MonoTime::max();
    int64_t lowest_step = INT64_MAX;
  };

  std::vector<std::pair<int, const std::string*>> ranks_;  // running ranks on fresh nodes, and their node
  std::map<std::string_view, size_t> counts_;              // of ranks_, by node
  std::vector<const std::string*> stalled_;                // nodes with a stalled rank
  LowestTwo<MonoTime> oldest_step_at_;
  LowestTwo<int64_t> lowest_step_;
  std::string phrase_;  // of every rank in ranks_
};

// A node past its silence limit with ranks that were running there: node_silent (down),
// unless the ranks of other nodes show its ranks training, when only monitoring is lost
// (a warning: nobody should be paged for a dead agent while the job trains on).
void silent_node_findings(const Context& c, const PeerProgress& progress, const std::string& name,
                          const NodeRecord& n, std::vector<Finding>& out) {
  std::vector<int> ranks;
  int64_t step_then = -1;
  for (int rank : n.ranks) {
    auto it = c.job.ranks().find(rank);
    if (it == c.job.ranks().end() || done(it->second.last) || it->second.node != name) continue;
    ranks.push_back(rank);
    step_then = std::max(step_then, it->second.last.step);
  }
  if (ranks.empty()) return;  // nothing was running there: a quiet node is no failure
  const MonoTime since = n.last_seen + c.silent_after(n);
  if (auto peers = progress.advanced(name, n.last_seen, step_then)) {
    out.push_back({"monitoring_lost", Severity::kWarning, ranks, name,
                   "monitoring lost for node " + name + ": no report for " + ago(c.now, n.last_seen) +
                       ", but " + peers->phrase + " on other nodes " + (peers->count == 1 ? "has" : "have") +
                       " advanced from step " + std::to_string(step_then) + " to step " +
                       std::to_string(peers->lowest_step) + " since, so its " + ranks_phrase(ranks) +
                       (ranks.size() == 1 ? " is" : " are") + " still training",
                   kOrderWarning, since});
    return;
  }
  out.push_back({"node_silent", Severity::kDown, ranks, name,
                 "node " + name + " has sent no report for " + ago(c.now, n.last_seen) + " (" +
                     std::to_string(c.t.missed_reports) + " reports missed; " + ranks_phrase(ranks) +
                     " last seen there at " + clock_time(c.wall(n.last_seen)) + ")",
                 kOrderNodeSilent, since, n.last_seen});
}

// A node whose agent said goodbye (its final report) while ranks there still ran. With the
// agent hosted in a rank (trainwatch.init(server=...)), the agent's host ends first and
// another local rank takes the role over (docs/training.md), so a report with final false
// follows within a second or two. When none follows within the silence limit, nobody
// watches those ranks: a warning, never a page, and never a timeout of the ranks, whose
// progress froze with that report. A node whose every rank ended is simply finished.
void unwatched_node_findings(const Context& c, const std::string& name, const NodeRecord& n,
                             std::vector<Finding>& out) {
  if (!n.final || c.now - n.last_seen <= c.silent_after(n)) return;
  std::vector<int> ranks;
  for (int rank : n.ranks) {
    auto it = c.job.ranks().find(rank);
    if (it == c.job.ranks().end() || it->second.node != name) continue;
    if (it->second.last.alive && !done(it->second.last)) ranks.push_back(rank);
  }
  if (ranks.empty()) return;
  out.push_back({"monitoring_lost", Severity::kWarning, ranks, name,
                 "monitoring lost for node " + name + ": its agent stopped with its host process at " +
                     clock_time(c.wall(n.last_seen)) + " while " + ranks_phrase(ranks) +
                     (ranks.size() == 1 ? " was" : " were") +
                     " still running there, and no agent has reported since",
                 kOrderWarning, n.last_seen + c.silent_after(n)});
}

void disk_and_memory_findings(const Context& c, const std::string& name, const NodeRecord& n,
                              std::vector<Finding>& out) {
  for (const auto& d : n.disks) {
    if (!d.ok) {
      out.push_back({"disk_missing",
                     Severity::kWarning,
                     {},
                     name,
                     d.name + " " + d.path + " on " + name + " cannot be read: " + d.error,
                     kOrderWarning,
                     n.last_seen});
    } else if (d.free_bytes < c.t.disk_free_bytes) {
      out.push_back({"disk_low",
                     Severity::kWarning,
                     {},
                     name,
                     d.name + " " + d.path + " on " + name + " has " +
                         fmt("%.1f GB", static_cast<double>(d.free_bytes) / 1e9) + " free < " +
                         fmt("%.1f GB", static_cast<double>(c.t.disk_free_bytes) / 1e9),
                     kOrderWarning,
                     n.last_seen});
    }
  }
  if (n.memory_available_bytes && *n.memory_available_bytes < c.t.host_memory_free_bytes) {
    out.push_back({"memory_low",
                   Severity::kWarning,
                   {},
                   name,
                   "host memory available on " + name + " is " +
                       fmt("%.1f GB", static_cast<double>(*n.memory_available_bytes) / 1e9) + " < " +
                       fmt("%.1f GB", static_cast<double>(c.t.host_memory_free_bytes) / 1e9),
                   kOrderWarning,
                   n.last_seen});
  }
}

// A closed rendezvous matters only while one of the node's ranks runs.
void rendezvous_findings(const Context& c, const std::string& name, const NodeRecord& n,
                         std::vector<Finding>& out) {
  if (!n.rendezvous || n.rendezvous->listening || n.rendezvous->port <= 0) return;
  bool any_running = false;
  for (int rank : n.ranks) {
    const RankEntry* e = c.rank(rank);
    any_running = any_running || (e != nullptr && e->running);
  }
  if (any_running) {
    out.push_back({"rendezvous_closed",
                   Severity::kWarning,
                   {},
                   name,
                   "rendezvous " + n.rendezvous->host + ":" + std::to_string(n.rendezvous->port) +
                       " is not accepting connections (seen from " + name + ")",
                   kOrderWarning,
                   n.last_seen});
  }
}

// A rank that two reporting nodes both carry: a mislabelled launch or a stale agent.
// Sorted by rank, each rank's nodes in name order; a run of two or more is the finding.
void claimed_twice_findings(const Context& c, std::vector<Finding>& out) {
  std::vector<std::pair<int, const std::string*>> claims;
  claims.reserve(c.ranks.size());
  for (const auto& [name, n] : c.job.nodes()) {
    if (c.silent(n) || n.final) continue;
    for (int rank : n.ranks) claims.emplace_back(rank, &name);
  }
  std::stable_sort(claims.begin(), claims.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < claims.size();) {
    size_t end = i + 1;
    while (end < claims.size() && claims[end].first == claims[i].first) ++end;
    if (end - i >= 2) {
      std::string list;
      for (size_t j = i; j < end; ++j) list += (list.empty() ? "" : " and ") + *claims[j].second;
      out.push_back({"rank_claimed_twice",
                     Severity::kWarning,
                     {claims[i].first},
                     "",
                     "rank " + std::to_string(claims[i].first) + " is reported by two nodes: " + list,
                     kOrderWarning,
                     c.now});
    }
    i = end;
  }
}

void node_findings(const Context& c, std::vector<Finding>& out) {
  std::optional<PeerProgress> progress;  // only once a node is silent
  for (const auto& [name, n] : c.job.nodes()) {
    if (c.silent(n)) {
      if (!progress) progress.emplace(c);
      silent_node_findings(c, *progress, name, n, out);
      continue;
    }
    unwatched_node_findings(c, name, n, out);
    gpu_findings(c.job, name, n, c.t, {kOrderHardware, kOrderWarning}, out);
    fabric_findings(c.job, name, n, {kOrderHardware, kOrderWarning}, out);
    disk_and_memory_findings(c, name, n, out);
    rendezvous_findings(c, name, n, out);
  }
  claimed_twice_findings(c, out);
}

double median(std::vector<double> v) {
  // Selection, not a sort: the straggler rule takes the median of 131,072 ranks each beat.
  const size_t n = v.size();
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (n % 2) return *mid;
  return (*std::max_element(v.begin(), mid) + *mid) / 2;
}

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

void missing_findings(const Context& c, int world_size, std::vector<Finding>& out) {
  if (world_size <= 0) return;
  auto first = c.job.attempt_started();
  if (!first || c.now - *first <= c.t.startup_timeout) return;
  std::vector<int> missing;
  // One walk beside the ranks, which are in order: no lookup per rank.
  auto seen = c.ranks.begin();
  for (int rank = 0; rank < world_size; ++rank) {
    while (seen != c.ranks.end() && seen->rank < rank) ++seen;
    if (seen == c.ranks.end() || seen->rank != rank) missing.push_back(rank);
  }
  if (missing.empty()) return;
  out.push_back({"ranks_missing", Severity::kDown, missing, "",
                 ranks_phrase(missing) + " of " + std::to_string(world_size) +
                     " never reported (start-up timeout " + format_duration(c.t.startup_timeout) + ")",
                 kOrderMissing, *first + c.t.startup_timeout});
}

// Whether a rank is waiting (for the culprit), judged by what its own node last reported.
// Nodes report every few seconds and at different instants, so `now - last step` of a
// rank that steps every 100 ms reads seconds for most of every interval on a node whose
// report is older than another's: healthy ranks would read "waiting". So a rank waits
// only when its node's last report already showed it more than `waiting_after` without a
// step, and that report is not overdue (a late node's news is stale; its silence, later,
// speaks for it). A rank writing a checkpoint makes no step because it is busy, not
// because it waits.
bool is_waiting(const RankEntry& e, Millis waiting_after) {
  const auto idle = no_step_at_report(*e.r);
  return idle && *idle > waiting_after && !in_checkpoint(e.r->last) && !e.node_overdue;
}

// The headline with its context: who failed after the culprit and who is waiting for it.
// A stuck rank's headline already says where the others are ("ranks 0-1,3 are in
// all_reduce (train.py:57)"): when exactly those ranks wait, the wait joins that phrase
// instead of naming them a second time.
std::string with_consequences(const Context& c, const Finding& head, Millis waiting_after) {
  std::vector<int> failed, waiting;
  std::string first_error;
  std::optional<MonoTime> waiting_since;
  // A set, not a scan of head.ranks per rank: a stalled job's finding names every rank.
  const std::unordered_set<int> blamed(head.ranks.begin(), head.ranks.end());
  for (const RankEntry& e : c.ranks) {
    const int rank = e.rank;
    const RankRecord& r = *e.r;
    if (blamed.count(rank) != 0) continue;
    if (e.node_silent) continue;
    if (r.last.status == RankStatus::kFailed || (!r.last.alive && !done(r.last))) {
      failed.push_back(rank);
      if (first_error.empty() && !r.last.error.empty()) first_error = r.last.error;
      continue;
    }
    if (!e.running || !is_waiting(e, waiting_after)) continue;
    waiting.push_back(rank);
    if (!waiting_since || *r.last_step_at > *waiting_since) waiting_since = *r.last_step_at;
  }
  std::string text = head.message;
  if (!failed.empty()) {
    std::string err = first_error.size() > 120 ? first_error.substr(0, 117) + "..." : first_error;
    text += "; " + ranks_phrase(failed) + " failed after it" + (err.empty() ? "" : " (" + err + ")");
  }
  if (!waiting.empty()) {
    const std::string since =
        "waiting since " + clock_time(c.wall(*waiting_since)) + " (" + ago(c.now, *waiting_since) + ")";
    const std::string placed = "; " + ranks_phrase(waiting) + (waiting.size() == 1 ? " is " : " are ");
    const size_t at = head.code == "rank_stuck" ? text.find(placed) : std::string::npos;
    if (at == std::string::npos) {
      text += "; " + ranks_phrase(waiting) + " " + since;
    } else {
      const size_t end = text.find("; ", at + placed.size());
      text.insert(end == std::string::npos ? text.size() : end, ", " + since);
    }
  }
  return text;
}

}  // namespace

std::string_view to_string(Severity s) { return s == Severity::kDown ? "down" : "warning"; }

Millis early_warning_after(std::optional<Millis> smoothed_step_gap) {
  const auto gaps =
      std::chrono::duration_cast<Millis>(kEarlyWarningGaps * smoothed_step_gap.value_or(Millis{0}));
  return std::max(kEarlyWarningFloor, gaps);
}

std::string clock_time(SystemTime t) {
  std::string iso = format_rfc3339(t);  // 2026-11-29T12:03:11.250Z
  return iso.size() >= 19 ? iso.substr(11, 8) + " UTC" : iso;
}

// The launcher restarted the ranks after a failure, and the new attempt has not stepped yet:
// the job is still down, now for its restart.
void restart_findings(const Context& c, std::vector<Finding>& out) {
  const auto& attempts = c.job.attempts();
  if (attempts.size() < 2) return;
  const AttemptRecord& now = attempts.back();
  const AttemptRecord& before = attempts[attempts.size() - 2];
  // A new run is a new submission, not a restart: it is judged as a first launch.
  if (now.first_step_at || now.run != before.run || now.launcher_attempt <= before.launcher_attempt) return;
  out.push_back({"restarting",
                 Severity::kDown,
                 {},
                 "",
                 "attempt " + std::to_string(now.number) + " (launcher restart " +
                     std::to_string(now.launcher_attempt) + ") is starting: no step yet in " +
                     ago(c.now, now.started) + "; attempt " + std::to_string(before.number) +
                     " got to step " + std::to_string(before.max_step),
                 kOrderRestarting,
                 now.started});
}

// A restarted job has shown how long its start-up takes: a later attempt that takes far
// longer is stuck, long before the configured start-up timeout of a first launch.
Millis startup_timeout_of(const JobState& job, const JobThresholds& t) {
  std::optional<Millis> longest;
  for (const auto& a : job.attempts()) {
    if (&a == &job.attempts().back() || !a.warm_at) continue;
    const auto took = std::chrono::duration_cast<Millis>(*a.warm_at - a.started);
    longest = std::max(longest.value_or(Millis{0}), took);
  }
  if (!longest) return t.startup_timeout;
  return std::min(t.startup_timeout, std::max(kLearnedStartupFloor, kLearnedStartupFactor * *longest));
}

namespace {

// What the ranks say together; fewest_steps counts running ranks only (UINT64_MAX: none).
struct RankTally {
  bool all_finished = false;
  bool any_failed = false;
  bool checkpointing = false;
  uint64_t fewest_steps = UINT64_MAX;
};

RankTally tally_ranks(const Context& c, const JobCheckSpec& spec) {
  RankTally tally;
  tally.all_finished = !c.job.ranks().empty();
  for (const RankEntry& e : c.ranks) {
    const RankRecord& r = *e.r;
    tally.all_finished = tally.all_finished && finished(r.last);
    tally.any_failed =
        tally.any_failed || r.last.status == RankStatus::kFailed || (!r.last.alive && !done(r.last));
    if (e.running) {
      tally.checkpointing = tally.checkpointing || in_checkpoint(r.last);
      tally.fewest_steps = std::min(tally.fewest_steps, r.last.step_reports);
    }
  }
  // Ranks that never reported have not finished.
  if (spec.world_size > 0 && static_cast<int>(c.job.ranks().size()) < spec.world_size) {
    tally.all_finished = false;
  }
  return tally;
}

// No rank has reported yet: waiting, and down once the start-up timeout has passed.
void judge_waiting(const Context& c, JobVerdict& v) {
  v.phase = "waiting";
  if (c.now - c.job.created() <= c.t.startup_timeout) return;
  v.findings.push_back({"no_reports",
                        Severity::kDown,
                        {},
                        "",
                        "no node has reported a rank of this job in " + ago(c.now, c.job.created()) +
                            " (start-up timeout " + format_duration(c.t.startup_timeout) + ")",
                        kOrderMissing,
                        c.job.created() + c.t.startup_timeout});
  v.down = true;
  v.cause = v.findings.front().message;
}

// Every finding of a job with ranks: down first, then in attribution order, then oldest
// first. A checkpoint or a start-up makes no steps, so stalls (and stragglers) wait.
void collect_findings(const Context& c, const JobCheckSpec& spec, bool starting, bool checkpointing,
                      const LearnedTimeouts::Timeout& step_timeout,
                      const LearnedTimeouts::Timeout& checkpoint_timeout, std::vector<Finding>& f) {
  rank_findings(c, f);
  restart_findings(c, f);
  node_findings(c, f);
  checkpoint_findings(c, checkpoint_timeout, f);
  if (!checkpointing) stall_findings(c, starting, step_timeout.value, step_timeout.learned, f);
  missing_findings(c, spec.world_size, f);
  if (!checkpointing && !starting) {
    straggler_findings(c, f);
    explain_slow_gpus(c.job, f);
    throughput_findings(c, f);
  }
  std::stable_sort(f.begin(), f.end(), [](const Finding& a, const Finding& b) {
    if (a.severity != b.severity) return a.severity == Severity::kDown;
    if (a.order != b.order) return a.order < b.order;
    return a.since < b.since;
  });
}

// Only reported errors (or non-finite losses) so far: a node that has not reported since
// the first of them may hold the rank that really failed (or went bad) first.
bool undecided(const Context& c, const Finding& head) {
  if (head.code != "rank_failed" && head.code != "loss_not_finite") return false;
  for (const auto& [name, n] : c.job.nodes()) {
    bool had_running = false;
    for (int rank : n.ranks) {
      auto it = c.job.ranks().find(rank);
      had_running =
          had_running || (it != c.job.ranks().end() && it->second.node == name && !done(it->second.last));
    }
    if (had_running && !n.final && n.last_seen < head.since && !c.silent(n)) return true;
    // A rank that failed on a broken connection failed because a peer did: its error
    // can reach the server before its agent has seen that peer gone.
    if (had_running && !n.final && head.code == "rank_failed" && c.now - head.since < kPeerFailureGrace &&
        failed_on_a_peer(c, head))
      return true;
  }
  return false;
}

// Down: the head finding with who failed after it and who waits for it. Else the
// warnings, joined.
void name_cause(const Context& c, JobVerdict& v) {
  const std::vector<Finding>& f = v.findings;
  v.down = !f.empty() && f.front().severity == Severity::kDown;
  if (!v.down) {
    for (const auto& x : f) {
      v.cause += (v.cause.empty() ? "" : "; ") + x.message;
      v.notify = v.notify || x.notify;
    }
    return;
  }
  const Finding& head = f.front();
  v.undecided = undecided(c, head);
  Millis waiting_after = std::max(Millis{1'000}, 2 * v.timeouts.smoothed_step_gap.value_or(Millis{0}));
  v.cause = with_consequences(c, head, waiting_after);
}

}  // namespace

JobVerdict analyse(const JobState& job, const JobCheckSpec& spec, MonoTime now, SystemTime wall_now) {
  JobVerdict v;
  JobThresholds t = spec.thresholds;
  t.startup_timeout = startup_timeout_of(job, t);
  const Context c(job, t, now, wall_now);
  const auto step_timeout = job.learned().step_timeout(t);
  const auto checkpoint_timeout = job.learned().checkpoint_timeout(t);
  v.timeouts = {t.startup_timeout,    step_timeout.value,         checkpoint_timeout.value,
                step_timeout.learned, checkpoint_timeout.learned, job.learned().smoothed_step_gap()};
  if (job.ranks().empty()) {
    judge_waiting(c, v);
    return v;
  }
  const RankTally tally = tally_ranks(c, spec);
  if (tally.all_finished) {
    v.phase = "finished";
    v.cause = "all " + std::to_string(job.ranks().size()) + " ranks finished";
    return v;
  }
  const bool starting =
      tally.fewest_steps != UINT64_MAX && tally.fewest_steps <= static_cast<uint64_t>(kWarmupSteps);
  v.phase = tally.any_failed      ? "failed"
            : tally.checkpointing ? "checkpointing"
            : starting            ? "starting"
                                  : "training";
  collect_findings(c, spec, starting, tally.checkpointing, step_timeout, checkpoint_timeout, v.findings);
  name_cause(c, v);
  return v;
}

}  // namespace trainwatch::jobs
