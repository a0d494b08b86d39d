#include "jobs/analysis.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <csignal>
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
#include "jobs/analysis_context.h"
#include "jobs/gpu_findings.h"
#include "jobs/loss_findings.h"
#include "jobs/node_findings.h"
#include "jobs/pace_findings.h"
#include "jobs/rank_place.h"
#include "jobs/rank_set.h"
#include "jobs/stall_findings.h"

namespace trainwatch::jobs {
namespace {

using namespace rules;  // NOLINT: the analysis is written in its rules' words

// How long a rank that failed on a broken connection (failed_on_a_peer) leaves the verdict
// undecided: the dead peer's agent sees it gone within a sample (200 ms) and reports it
// within kMinPushGap more; a second covers the network and a late sample.
constexpr Millis kPeerFailureGrace{2'000};

// An error quoted in another finding's sentence keeps its first line, cut at this length.
constexpr size_t kQuotedErrorChars = 200;

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

// The OOM killer's victim, with the memory it held when last seen: ", 612 MB resident when
// last seen". Nothing for any other death.
std::string memory_at_death(const RankReport& l) {
  if (!l.exit || !l.exit->oom_killed || !l.rss_bytes) return "";
  return ", " + fmt("%.0f MB", static_cast<double>(*l.rss_bytes) / 1e6) + " resident when last seen";
}

// What a rank that died had said before: an error it reported (a caught exception, a failed
// checkpoint's OSError) is the likeliest cause of an abort that followed, so the alert quotes
// its first line and when it came.
//   ", after reporting an error at 12:03:11 UTC: OSError: [Errno 28] No space left on device"
std::string error_before_death(const Context& c, const RankRecord& r) {
  const std::string& error = r.last.error;
  if (error.empty()) return ", without reporting an error";
  std::string line = error.substr(0, error.find('\n'));
  if (line.size() > kQuotedErrorChars) line = line.substr(0, kQuotedErrorChars) + "...";
  return ", after reporting an error" +
         (r.error_at ? " at " + clock_time(c.wall(*r.error_at)) : std::string()) + ": " + line;
}

// The finding of a rank the shared rule (core/rank_rule.h) does not call running: gone,
// failed, stopped or blocked. Returns whether the rank still runs (a blocked or stopped
// rank does: its numbers are judged too).
bool ruling_findings(const Context& c, int rank, const RankRecord& r, std::vector<Finding>& out) {
  const RankReport& l = r.last;
  // The agent's /health judges the same facts by the same rule (core/rank_rule.h), and
  // names each ruling by these codes' texts (ruling_code).
  const RankRuling ruling = rule_rank(c.facts(r));
  switch (ruling) {
    case RankRuling::kGone:
      out.push_back({FindingCode::kRankGone,
                     Severity::kDown,
                     {rank},
                     r.node,
                     c.who(rank, r) + (l.exit ? " " + describe_exit(*l.exit) : " vanished") + c.at_step(r) +
                         " while " + std::string(to_string(l.status)) + memory_at_death(l) +
                         error_before_death(c, r) + (l.exit ? "" : " (exit status unknown to the agent)"),
                     kOrderGone,
                     r.gone_at.value_or(r.seen)});
      out.back().terminated = l.exit && l.exit->signal == SIGTERM;
      return false;
    case RankRuling::kFailed:
      out.push_back({FindingCode::kRankFailed,
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
          {FindingCode::kRankStopped,
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
      out.push_back({FindingCode::kRankBlocked,
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
    out.push_back({FindingCode::kOverflowStreak,
                   Severity::kDown,
                   {rank},
                   r.node,
                   c.who(rank, r) + " skipped " + std::to_string(l.overflow_consecutive) +
                       " steps in a row on fp16 overflow" + c.at_step(r) +
                       (l.loss_scale ? " (loss scale " + number_text(*l.loss_scale) + ")" : ""),
                   kOrderNumbers + 1,
                   r.seen});
  } else if (l.loss_scale && *l.loss_scale <= c.t.min_loss_scale && l.overflow_consecutive > 0) {
    out.push_back({FindingCode::kLossScaleMin,
                   Severity::kDown,
                   {rank},
                   r.node,
                   c.who(rank, r) + " loss scale is at its minimum (" + number_text(*l.loss_scale) +
                       ") and still overflowing" + c.at_step(r),
                   kOrderNumbers + 2,
                   r.seen});
  }
  if (l.checkpoint.state == CheckpointState::kFailed) {
    out.push_back({FindingCode::kCheckpointFailed,
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
  std::vector<RankRef> running;
  for (const RankEntry& e : c.ranks) {
    if (e.node_silent || e.slot_removed) continue;  // node_silent or slot_removed speaks for it
    const RankRecord& r = *e.r;
    if (!ruling_findings(c, e.rank, r, out)) continue;
    running.emplace_back(e.rank, &r);
    overflow_and_checkpoint_findings(c, e.rank, r, out);
  }
  loss_findings(c, running, out);
}

void checkpoint_findings(const Context& c, const LearnedTimeouts::Timeout& timeout,
                         std::vector<Finding>& out) {
  for (const RankEntry& e : c.ranks) {
    if (!e.running || !e.r->checkpoint_begin_at) continue;
    const int rank = e.rank;
    const RankRecord& r = *e.r;
    if (c.now - *r.checkpoint_begin_at <= timeout.value) continue;
    out.push_back({FindingCode::kCheckpointTooLong,
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
    out.push_back({FindingCode::kCheckpointOverdue,
                   Severity::kWarning,
                   {},
                   "",
                   "the last good checkpoint is " + ago(c.now, *last_ok) +
                       " old, more than twice the observed interval (" + format_duration(*interval) + ")",
                   kOrderWarning,
                   *last_ok + 2 * *interval});
  }
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
  out.push_back({FindingCode::kRanksMissing, Severity::kDown, missing, "",
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
    const bool placed_others = names_waited_for(head.code);
    const size_t at = placed_others ? text.find(placed) : std::string::npos;
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
  out.push_back({FindingCode::kRestarting,
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
  bool evaluating = false;  // a running rank in a declared evaluation
  bool off_pace = false;    // a running rank in a declared evaluation or warm-up
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
      tally.evaluating = tally.evaluating || evaluating(r.last);
      tally.off_pace = tally.off_pace || off_pace(r.last);
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
  v.phase = JobPhase::kWaiting;
  if (c.now - c.job.created() <= c.t.startup_timeout) return;
  v.findings.push_back({FindingCode::kNoReports,
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

// A declared evaluation makes no steps on purpose, as a checkpoint does, and has its own
// learned timeout: past it, it is stuck.
void evaluation_findings(const Context& c, const LearnedTimeouts::Timeout& timeout,
                         std::vector<Finding>& out) {
  for (const RankEntry& e : c.ranks) {
    if (!e.running || !e.r->evaluating_since || !evaluating(e.r->last)) continue;
    const RankRecord& r = *e.r;
    if (c.now - *r.evaluating_since <= timeout.value) continue;
    out.push_back({FindingCode::kEvaluationTooLong,
                   Severity::kDown,
                   {e.rank},
                   r.node,
                   c.who(e.rank, r) + " has been evaluating for " + ago(c.now, *r.evaluating_since) +
                       c.at_step(r) + " (evaluation timeout " + format_duration(timeout.value) +
                       (timeout.learned ? ", learned" : "") + ")",
                   kOrderStalled,
                   *r.evaluating_since + timeout.value,
                   *r.evaluating_since});
  }
}

// Every finding of a job with ranks: down first, then in attribution order, then oldest
// first. A checkpoint, a declared evaluation or a start-up makes no steps, so stalls (and
// stragglers) wait; a declared warm-up says nothing of the job's pace.
void collect_findings(const Context& c, const JobCheckSpec& spec, bool starting, const RankTally& tally,
                      const LearnedTimeouts::Timeout& step_timeout, std::vector<Finding>& f) {
  rank_findings(c, f);
  restart_findings(c, f);
  node_findings(c, f);
  checkpoint_findings(c, c.job.learned().checkpoint_timeout(c.t), f);
  evaluation_findings(c, c.job.learned().evaluation_timeout(c.t), f);
  const bool paused = tally.checkpointing || tally.evaluating;
  if (!paused) stall_findings(c, starting, step_timeout.value, step_timeout.learned, f);
  missing_findings(c, spec.world_size, f);
  if (!paused && !starting && !tally.off_pace) {
    const size_t before = f.size();
    straggler_findings(c, f);
    explain_slow_gpus(c.job, f);
    // A straggler explains the job's slower pace: the drop is its finding, not a second one.
    if (f.size() == before) {
      StallSense sense = stall_sense(c);
      sense.explained = sense.explained || std::any_of(f.begin(), f.end(), [](const Finding& x) {
                          return suspects_culprit(x.code);
                        });
      throughput_findings(c, sense, f);
    }
  }
  std::stable_sort(f.begin(), f.end(), [](const Finding& a, const Finding& b) {
    if (a.severity != b.severity) return a.severity == Severity::kDown;
    if (a.order != b.order) return a.order < b.order;
    if (a.since != b.since) return a.since < b.since;
    return !a.terminated && b.terminated;
  });
}

// Only reported errors (or non-finite losses) so far: a node that has not reported since
// the first of them may hold the rank that really failed (or went bad) first.
bool undecided(const Context& c, const Finding& head) {
  if (head.code != FindingCode::kRankFailed && head.code != FindingCode::kLossNotFinite) return false;
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
    if (had_running && !n.final && head.code == FindingCode::kRankFailed &&
        c.now - head.since < kPeerFailureGrace && failed_on_a_peer(c, head))
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
    v.phase = JobPhase::kFinished;
    v.cause = "all " + std::to_string(job.ranks().size()) + " ranks finished";
    return v;
  }
  const bool starting =
      tally.fewest_steps != UINT64_MAX && tally.fewest_steps <= static_cast<uint64_t>(kWarmupSteps);
  v.phase = tally.any_failed      ? JobPhase::kFailed
            : tally.checkpointing ? JobPhase::kCheckpointing
            : tally.evaluating    ? JobPhase::kEvaluating
            : starting            ? JobPhase::kStarting
                                  : JobPhase::kTraining;
  collect_findings(c, spec, starting, tally, step_timeout, v.findings);
  name_cause(c, v);
  return v;
}

}  // namespace trainwatch::jobs
