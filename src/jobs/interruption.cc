#include "jobs/interruption.h"

#include <algorithm>
#include <csignal>
#include <utility>
#include <vector>

#include "core/enum_names.h"
#include "core/process_exit.h"
#include "jobs/rank_place.h"

namespace trainwatch::jobs {
namespace {

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// The first line of an error, bounded: "RuntimeError: CUDA out of memory. Tried to ...".
std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.size() > 200 ? line.substr(0, 200) + "…" : line;
}

InterruptionCause from_exit(const ProcessExit& e) {
  if (e.signal == SIGKILL && e.oom_killed) return {InterruptionKind::kHostOom, "SIGKILL by the OOM killer"};
  if (e.signal == SIGTERM) return {InterruptionKind::kPreempted, "SIGTERM"};
  if (e.signal != 0) return {InterruptionKind::kSignal, signal_name(e.signal)};
  return {InterruptionKind::kExitCode, "exit code " + std::to_string(e.code)};
}

InterruptionCause from_error(const std::string& error) {
  const std::string line = first_line(error);
  if (contains(error, "CUDA out of memory") || contains(error, "OutOfMemoryError") ||
      contains(error, "CUDA error: out of memory")) {
    return {InterruptionKind::kGpuOom, line};
  }
  if (contains(error, "No space left on device") || contains(error, "ENOSPC"))
    return {InterruptionKind::kDiskFull, line};
  if (error.rfind("MemoryError", 0) == 0) return {InterruptionKind::kHostOom, line};
  return {InterruptionKind::kException, line};
}

const RankReport* first_rank(const Finding& head, const JobState& job) {
  if (head.ranks.empty()) return nullptr;
  auto it = job.ranks().find(head.ranks.front());
  return it == job.ranks().end() ? nullptr : &it->second.last;
}

// Whether the stalled ranks wait in a collective, by their stacks or system calls.
bool stalled_in_collective(const Finding& head, const JobState& job) {
  std::vector<std::pair<int, const RankReport*>> ranks;
  for (int rank : head.ranks) {
    if (auto it = job.ranks().find(rank); it != job.ranks().end()) ranks.emplace_back(rank, &it->second.last);
  }
  const Whereabouts w = whereabouts(ranks);
  return std::any_of(w.groups.begin(), w.groups.end(),
                     [](const PlaceGroup& g) { return g.place.kind == RankPlace::Kind::kCollective; });
}

// Outcomes of an attempt that stopped before its work was done: until the job trains
// again, its time is lost. A finished attempt, or one superseded by a new run while its
// ranks still trained (a deliberate new submission), lost nothing to a failure.
bool stopped_short(LaunchOutcome o) {
  return o == LaunchOutcome::kFailed || o == LaunchOutcome::kPreempted || o == LaunchOutcome::kRequeued;
}

// The interruption of attempt `ended`, which the next attempt replaced before a verdict
// showed its failure: named from the rank whose end gave the attempt its outcome, as
// classify() names a rank_failed or rank_gone finding, or, without one, by the outcome.
Interruption unseen_interruption(const AttemptRecord& ended, int next, MonoTime now) {
  Interruption i;
  i.attempt = ended.number;
  const MonoTime ended_at = std::min(ended.ended_at.value_or(now), now);
  const std::string replaced = "; attempt " + std::to_string(next) + " began before trainwatch saw it";
  if (ended.ending) {
    const RankEnding& e = *ended.ending;
    const std::string rank = "rank " + std::to_string(e.rank);
    if (!e.error.empty()) {
      i.code = FindingCode::kRankFailed;
      i.cause = from_error(e.error);
      i.message = rank + " failed: " + first_line(e.error) + replaced;
    } else {
      i.code = FindingCode::kRankGone;
      i.cause =
          e.exit ? from_exit(*e.exit) : InterruptionCause{InterruptionKind::kVanished, "exit status unknown"};
      i.message = rank + (e.exit ? " " + describe_exit(*e.exit) : " vanished") + replaced;
    }
    i.failed_at = std::min(e.at, ended_at);
    if (auto cause = reclassify(i.cause, ended.outcome)) i.cause = std::move(*cause);
  } else {
    // Requeued (its ranks last seen running), or a failure the attempt did not keep (an older
    // server's memo): no rank says why; the outcome may.
    i.code = FindingCode::kRestarting;
    i.cause = ended.outcome == LaunchOutcome::kRequeued
                  ? InterruptionCause{InterruptionKind::kRequeued, "relaunched while its ranks ran"}
                  : InterruptionCause{InterruptionKind::kRestarted, "before trainwatch saw why"};
    i.message = "attempt " + std::to_string(ended.number) + " ended (" +
                std::string(to_string(ended.outcome)) + ")" + replaced;
    i.failed_at = ended_at;
  }
  i.step = ended.max_step;
  i.world_size = ended.world_size;
  return i;
}

}  // namespace

namespace {

constexpr EnumNames<InterruptionKind, 20> kInterruptionKindNames{{
    {InterruptionKind::kSignal, "signal"},
    {InterruptionKind::kExitCode, "exit_code"},
    {InterruptionKind::kVanished, "vanished"},
    {InterruptionKind::kException, "exception"},
    {InterruptionKind::kHostOom, "host_oom"},
    {InterruptionKind::kGpuOom, "gpu_oom"},
    {InterruptionKind::kPreempted, "preempted"},
    {InterruptionKind::kNumbers, "nan_overflow"},
    {InterruptionKind::kHangInCollective, "hang_in_collective"},
    {InterruptionKind::kHangElsewhere, "hang_elsewhere"},
    {InterruptionKind::kStopped, "stopped"},
    {InterruptionKind::kCheckpointFailed, "checkpoint_failed"},
    {InterruptionKind::kDiskFull, "disk_full"},
    {InterruptionKind::kNodeLost, "node_lost"},
    {InterruptionKind::kGpuFault, "gpu_fault"},
    {InterruptionKind::kFabricFault, "fabric_fault"},
    {InterruptionKind::kStartup, "startup"},
    {InterruptionKind::kRestarted, "restarted"},
    {InterruptionKind::kRequeued, "requeued"},
    {InterruptionKind::kOther, "other"},
}};
static_assert(kInterruptionKindNames.size() == static_cast<std::size_t>(InterruptionKind::kOther) + 1,
              "every kind has its name");

}  // namespace

std::string_view to_string(InterruptionKind k) { return name_of(kInterruptionKindNames, k); }

std::optional<InterruptionKind> interruption_kind_from_string(std::string_view s) {
  return value_of(kInterruptionKindNames, s);
}

InterruptionCause classify(const Finding& head, const JobState& job) {
  const FindingCode c = head.code;
  const std::string code(to_string(c));
  const RankReport* rank = first_rank(head, job);
  if (is_numbers(c)) return {InterruptionKind::kNumbers, code};
  if (is_gpu_fault(c)) return {InterruptionKind::kGpuFault, code};
  if (is_startup(c)) return {InterruptionKind::kStartup, code};
  switch (c) {
    case FindingCode::kRankGone:
      // An abort after a reported error (torch.save's OSError on a full disk) died of that error.
      if (rank && !rank->error.empty()) {
        if (InterruptionCause cause = from_error(rank->error); cause.kind != InterruptionKind::kException)
          return cause;
      }
      if (rank && rank->exit) return from_exit(*rank->exit);
      return {InterruptionKind::kVanished, "exit status unknown"};
    case FindingCode::kRankFailed: return from_error(rank ? rank->error : "");
    case FindingCode::kCheckpointFailed: {
      InterruptionCause cause = from_error(rank ? rank->error : "");
      if (cause.kind != InterruptionKind::kDiskFull) cause.kind = InterruptionKind::kCheckpointFailed;
      return cause;
    }
    case FindingCode::kCheckpointTooLong: return {InterruptionKind::kCheckpointFailed, "took too long"};
    case FindingCode::kRankStuck: return {InterruptionKind::kHangElsewhere, head.message};
    case FindingCode::kCollectiveMismatch:
      return {InterruptionKind::kHangInCollective, "collective mismatch"};
    case FindingCode::kJobStalled:
    case FindingCode::kRankHung:
      return {
          stalled_in_collective(head, job) ? InterruptionKind::kHangInCollective : InterruptionKind::kOther,
          c == FindingCode::kJobStalled ? "every rank stopped" : "one rank stopped"};
    case FindingCode::kRankStopped:
    case FindingCode::kRankBlocked: return {InterruptionKind::kStopped, code};
    case FindingCode::kNodeSilent: return {InterruptionKind::kNodeLost, head.node};
    case FindingCode::kIbPortDown: return {InterruptionKind::kFabricFault, head.node};
    case FindingCode::kRestarting: return {InterruptionKind::kRestarted, "before trainwatch saw why"};
    default: return {InterruptionKind::kOther, code};
  }
}

std::optional<InterruptionCause> reclassify(const InterruptionCause& cause, LaunchOutcome outcome) {
  const bool unexplained = cause.kind == InterruptionKind::kNodeLost ||
                           cause.kind == InterruptionKind::kVanished ||
                           cause.kind == InterruptionKind::kRestarted;
  if (!unexplained) return std::nullopt;
  if (outcome == LaunchOutcome::kRequeued)
    return InterruptionCause{InterruptionKind::kRequeued,
                             "relaunched by its scheduler after " + cause.detail};
  if (outcome == LaunchOutcome::kPreempted)
    return InterruptionCause{InterruptionKind::kPreempted, "SIGTERM, then " + cause.detail};
  return std::nullopt;
}

Millis Interruption::to_detect() const {
  return std::max(Millis{0}, std::chrono::duration_cast<Millis>(detected_at - failed_at));
}

Millis Interruption::to_resume(MonoTime now) const {
  return std::max(Millis{0}, std::chrono::duration_cast<Millis>(resumed_at.value_or(now) - detected_at));
}

Millis Interruption::recomputed(MonoTime attempt_started) const {
  if (!restarted) return Millis{0};
  return std::max(Millis{0},
                  std::chrono::duration_cast<Millis>(failed_at - checkpoint_at.value_or(attempt_started)));
}

std::optional<int64_t> Interruption::steps_lost() const {
  if (resumed_at && !restarted) return 0;
  if (step < 0) return std::nullopt;
  // Restarted: the new attempt makes again every step from its first to the one that
  // failed. Not yet: at least those since the last good checkpoint will be.
  if (restarted && resumed_from_step >= 0) return std::max<int64_t>(0, step - resumed_from_step + 1);
  return std::max<int64_t>(0, step - std::max<int64_t>(checkpoint_step, 0));
}

double Interruption::gpu_hours_lost(MonoTime now, MonoTime attempt_started) const {
  const Millis lost = to_detect() + to_resume(now) + recomputed(attempt_started);
  return static_cast<double>(std::max(world_size, 1)) * static_cast<double>(lost.count()) / 3.6e6;
}

// Where the work of attempt `number` began: its first step (its start-up before that is
// not training, and a restart's start-up is already booked as time to train again); its
// first report when it never stepped, or is no longer kept.
MonoTime work_began(const JobState& job, int number) {
  const AttemptRecord* a = job.attempt(number);
  if (a != nullptr && a->first_step_at) return *a->first_step_at;
  return job.attempt_start(number);
}

// Once the interrupted attempt has ended, its outcome may say whose doing it was
// (reclassify): the cause is moved, and its count with it.
bool InterruptionLedger::reclass_by_outcome(Interruption& i, const JobState& job) {
  const AttemptRecord* ended = job.attempt(i.attempt);
  if (ended == nullptr || ended->outcome == LaunchOutcome::kOpen) return false;
  auto cause = reclassify(i.cause, ended->outcome);
  if (!cause) return false;
  if (totals_[i.cause.kind].count > 0) --totals_[i.cause.kind].count;
  i.cause = std::move(*cause);
  ++totals_[i.cause.kind].count;
  return true;
}

void InterruptionLedger::close(Interruption& i, const JobState& job, MonoTime now) {
  reclass_by_outcome(i, job);
  i.resumed_at = now;
  const AttemptRecord* current = job.attempts().empty() ? nullptr : &job.attempts().back();
  i.restarted = current && current->number != i.attempt;
  if (i.restarted) i.resumed_from_step = current->first_step;
  const MonoTime started = work_began(job, i.attempt);
  CauseTotals& t = totals_[i.cause.kind];
  t.gpu_hours_lost += i.gpu_hours_lost(now, started);
  closed_.detecting += i.to_detect();
  closed_.restarting += i.to_resume(now);
  closed_.recomputing += i.recomputed(started);
}

// A stall opens as "every rank stopped" when the stacks that name the rank the others
// wait for come after the verdict (the agents ask for them once a step is overdue, and
// each node's arrive with its next report). Once the analysis names that rank, the
// interruption takes its finding: the same hang, now attributed to where it is.
bool InterruptionLedger::attribute(Interruption& i, const JobVerdict& v, const JobState& job) {
  if (!v.down || v.findings.empty()) return false;
  const Finding& head = v.findings.front();
  if (!names_waited_for(head.code) || !unplaced_hang(i.code)) return false;
  --totals_[i.cause.kind].count;
  i.code = head.code;
  i.cause = classify(head, job);
  i.message = head.message;
  ++totals_[i.cause.kind].count;
  return true;
}

// The first capture while the job is down, or a later one that names the rank the others
// waited for where the kept one does not: each node's stacks come with its own report, so
// the first capture may hold only the waiting ranks.
bool InterruptionLedger::keep_better_stacks(Interruption& i, const JobVerdict& v, const JobState& job) {
  auto named = [](const std::vector<KeptStackGroup>& groups) {
    return std::any_of(groups.begin(), groups.end(), [](const KeptStackGroup& g) { return g.culprit; });
  };
  if (!v.down || (!i.stacks.empty() && named(i.stacks))) return false;
  std::vector<KeptStackGroup> capture = keep_stacks(job, v.findings.front());
  if (capture.empty() || (!i.stacks.empty() && !named(capture))) return false;
  i.stacks = std::move(capture);
  return true;
}

bool InterruptionLedger::observe(const JobState& job, const JobVerdict& v, MonoTime now, SystemTime wall) {
  const bool changed = update(job, v, now, wall);
  if (changed) ++revision_;
  return changed;
}

bool InterruptionLedger::update(const JobState& job, const JobVerdict& v, MonoTime now, SystemTime wall) {
  // The attempts first: an ending recorded now is then followed, and closed, by this verdict.
  const bool judged = judge_new_attempts(job, now, wall);
  return follow_verdict(job, v, now, wall) || judged;
}

bool InterruptionLedger::recorded(const AttemptRecord& a) const {
  const auto ended = a.ending ? std::optional<MonoTime>(a.ending->at) : a.ended_at;
  return std::any_of(entries_.begin(), entries_.end(), [&](const Interruption& i) {
    return i.attempt == a.number && (!ended || i.detected_at >= *ended);
  });
}

bool InterruptionLedger::judge_new_attempts(const JobState& job, MonoTime now, SystemTime wall) {
  const int current = job.attempts().empty() ? 0 : job.attempts().back().number;
  if (current <= attempt_seen_) return false;
  const int seen = std::exchange(attempt_seen_, current);
  // An open interruption spans the attempts that ended since: it closes when one trains.
  if (open()) return true;
  // The attempts from the one last seen current to the one before the current one have
  // ended since the last verdict. Should several have, the first that stopped short begins
  // the one interruption: the job has not trained since (by the ledger's last look).
  for (const AttemptRecord& a : job.attempts()) {
    if (a.number < seen || a.number >= current || !stopped_short(a.outcome) || recorded(a)) continue;
    Interruption i = unseen_interruption(a, current, now);
    i.detected_at = now;
    i.failed_wall = wall - std::chrono::duration_cast<SystemTime::duration>(now - i.failed_at);
    i.checkpoint_step = job.last_ok_checkpoint_step();
    i.checkpoint_at = job.last_ok_checkpoint_at();
    if (i.world_size <= 0) i.world_size = static_cast<int>(job.ranks().size());
    add(std::move(i));
    break;
  }
  return true;
}

void InterruptionLedger::add(Interruption i) {
  ++totals_[i.cause.kind].count;
  ++count_;
  entries_.push_back(std::move(i));
  while (entries_.size() > kMaxInterruptions) entries_.pop_front();
}

bool InterruptionLedger::follow_verdict(const JobState& job, const JobVerdict& v, MonoTime now,
                                        SystemTime wall) {
  // A checkpoint that failed while the ranks trained on stopped nothing: such a verdict is
  // down (it pages until a good checkpoint), but the job trains, and it opens no interruption.
  // What it costs shows later, if at all: a restart redoes the steps since the last good
  // checkpoint, which recomputed() books.
  const bool checkpoint_only =
      v.down && !v.findings.empty() && v.findings.front().code == FindingCode::kCheckpointFailed;
  const bool trains = (!v.down || checkpoint_only) && at_work(v.phase);
  if (open()) {
    Interruption& current = entries_.back();
    // Training again: the new attempt's first step, or the stall's end. A job that
    // finished meanwhile resumed nothing; it stays open until it is seen training.
    if (!trains || (v.phase == JobPhase::kStarting && job.attempts().back().number == current.attempt)) {
      const bool attributed = attribute(current, v, job);
      const bool reclassed = reclass_by_outcome(current, job);
      return keep_better_stacks(current, v, job) || attributed || reclassed;
    }
    close(current, job, now);
    return true;
  }
  if (!v.down || v.undecided || v.findings.empty() || checkpoint_only) return false;
  const Finding& head = v.findings.front();
  Interruption i;
  i.attempt = job.attempts().empty() ? 1 : job.attempts().back().number;
  i.code = head.code;
  i.cause = classify(head, job);
  i.message = head.message;
  // The failure is the last sign of progress: a hang began at its last step, not when its
  // timeout was crossed, and the time between is lost to the job all the same.
  i.failed_at = std::min(head.last_progress.value_or(head.since), now);
  i.detected_at = now;
  i.failed_wall = wall - std::chrono::duration_cast<SystemTime::duration>(now - i.failed_at);
  for (const auto& [rank, r] : job.ranks()) i.step = std::max(i.step, r.last.step);
  i.checkpoint_step = job.last_ok_checkpoint_step();
  i.checkpoint_at = job.last_ok_checkpoint_at();
  i.world_size =
      job.attempts().empty() ? static_cast<int>(job.ranks().size()) : job.attempts().back().world_size;
  if (i.world_size <= 0) i.world_size = static_cast<int>(job.ranks().size());
  i.stacks = keep_stacks(job, head);
  add(std::move(i));
  return true;
}

Goodput InterruptionLedger::goodput(const JobState& job, MonoTime now) const {
  Goodput g = closed_;
  if (open()) {
    const Interruption& i = entries_.back();
    g.detecting += i.to_detect();
    g.restarting += i.to_resume(now);
  }
  // From the job's first step: the minutes of start-up before it (imports, data loading,
  // the rendezvous) are not training lost, and the ledger books no failure before it.
  const auto first = job.first_step() ? job.first_step() : job.first_report();
  g.wall = first ? std::chrono::duration_cast<Millis>(now - *first) : Millis{0};
  const Millis lost = g.detecting + g.restarting + g.recomputing;
  g.ratio = g.wall.count() > 0
                ? std::clamp(1.0 - static_cast<double>(lost.count()) / static_cast<double>(g.wall.count()),
                             0.0, 1.0)
                : 1.0;
  return g;
}

}  // namespace trainwatch::jobs
