// The interruption ledger: every time a job stopped training, why, and what it cost.
//
// An interruption opens when the job's verdict goes down with a decided culprit (the
// finding at its head, classified below), and closes when the job trains again: in place
// (a stall that ended) or as a new attempt after a restart (job_state.h). For each: time
// to detect (failure to verdict), time to restart (verdict to training again), and, after
// a restart, the work redone: the steps and time since the last good checkpoint. GPU-hours
// count one GPU a rank (world size x time), the usual layout of data-parallel training.
// Goodput is the share of the job's wall time since its first step whose training was kept.
//
// A failure can also end an attempt between two verdicts: a rank killed and its launcher's
// restart (or the job submitted again) within the analysis's second. No verdict shows it,
// so the ledger also watches the attempts: a new one whose predecessor stopped short
// (failed, preempted, requeued) while no interruption was open records one from what that
// attempt kept of its end (AttemptRecord::ending), which then closes as any other.
//
// Pure: fed the job's state and each verdict by JobRegistry, on the manual clock in tests.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "jobs/analysis.h"
#include "jobs/finding_code.h"
#include "jobs/job_state.h"
#include "jobs/kept_stacks.h"

namespace trainwatch::jobs {

enum class InterruptionKind {
  kSignal,            // killed by a signal (which: detail)
  kExitCode,          // exited non-zero without a Python error
  kVanished,          // gone, how unknown to the agent
  kException,         // a Python exception (type and message: detail)
  kHostOom,           // the kernel's OOM killer, or MemoryError
  kGpuOom,            // CUDA out of memory
  kPreempted,         // SIGTERM: the scheduler took the nodes back
  kNumbers,           // loss NaN/inf, overflow streak, loss scale at its floor
  kHangInCollective,  // every rank stopped, waiting together
  kHangElsewhere,     // one rank stuck outside the collective the others wait in
  kStopped,           // a process stopped (SIGSTOP, a debugger) or blocked in the kernel
  kCheckpointFailed,
  kDiskFull,
  kNodeLost,
  kGpuFault,     // XID, ECC, fell off the bus, rows pending remap, a recovery action, NVLink down
  kFabricFault,  // an InfiniBand/RoCE port down (detail: the node)
  kStartup,      // never started: ranks missing, start-up stuck
  kRestarted,    // the launcher restarted the ranks before the failure was seen
  kRequeued,     // the scheduler took the allocation, ranks and agents alike, and launched it again
  kOther,
};
std::string_view to_string(InterruptionKind k);
std::optional<InterruptionKind> interruption_kind_from_string(std::string_view s);

struct InterruptionCause {
  InterruptionKind kind = InterruptionKind::kOther;
  std::string detail;  // "SIGKILL", "exit code 1", "RuntimeError: CUDA out of memory..."
};

// What the head finding of a down verdict says about why the job stopped.
InterruptionCause classify(const Finding& head, const JobState& job);

// What the cause becomes once the interrupted attempt has ended as `outcome`: a node gone
// silent, ranks vanished, or a restart before anything was seen, where the scheduler
// brought the job back without a failure of its ranks' own (requeued) or ended it by SIGTERM
// (preempted), was the scheduler's doing. nullopt: the cause stands.
std::optional<InterruptionCause> reclassify(const InterruptionCause& cause, LaunchOutcome outcome);

struct Interruption {
  int attempt = 1;                           // the attempt it interrupted (AttemptRecord::number)
  FindingCode code = FindingCode::kUnknown;  // the head finding's
  InterruptionCause cause;
  std::string message;  // the head finding's message
  MonoTime failed_at{}, detected_at{};
  SystemTime failed_wall{};
  int64_t step = -1;             // the most advanced step when it failed
  int64_t checkpoint_step = -1;  // the last good checkpoint then (-1: none)
  std::optional<MonoTime> checkpoint_at;
  int world_size = 0;
  std::optional<MonoTime> resumed_at;  // trained again
  bool restarted = false;              // as a new attempt
  int64_t resumed_from_step = -1;
  // Where the ranks were, from the stacks their agents captured while it was open: the
  // first capture (the agents ask for stacks once a step is overdue, which may come after
  // the verdict), or the first after it that names the rank the others waited for; empty
  // when none came.
  std::vector<KeptStackGroup> stacks;

  Millis to_detect() const;
  // Verdict to training again; up to `now` while open.
  Millis to_resume(MonoTime now) const;
  // Training redone after a restart: failure back to the last good checkpoint (to the
  // attempt's first step without one, `attempt_started`); zero when it resumed in place.
  Millis recomputed(MonoTime attempt_started) const;
  std::optional<int64_t> steps_lost() const;
  double gpu_hours_lost(MonoTime now, MonoTime attempt_started) const;
};

// Where the work of attempt `number` began, which a restart redoes without a checkpoint:
// its first step; its first report when it never stepped or is no longer kept.
MonoTime work_began(const JobState& job, int number);

struct Goodput {
  Millis wall{0};  // since the job's first step (its first report, before any step)
  Millis detecting{0}, restarting{0}, recomputing{0};
  double ratio = 1;  // (wall - lost) / wall
};

struct CauseTotals {
  uint64_t count = 0;
  double gpu_hours_lost = 0;
};

inline constexpr size_t kMaxInterruptions = 256;  // per job; the oldest go first

class InterruptionLedger {
 public:
  // Feeds one verdict; returns whether the ledger changed.
  bool observe(const JobState& job, const JobVerdict& v, MonoTime now, SystemTime wall);

  const std::deque<Interruption>& entries() const { return entries_; }  // newest last
  bool open() const { return !entries_.empty() && !entries_.back().resumed_at; }
  Goodput goodput(const JobState& job, MonoTime now) const;
  // Every interruption since the job was first seen, kept or not, by kind.
  const std::map<InterruptionKind, CauseTotals>& totals() const { return totals_; }
  uint64_t count() const { return count_; }
  // Grows with every change observe() makes, so a holder can tell that the ledger changed.
  uint64_t revision() const { return revision_; }
  // The lost times of the interruptions already closed (wall and ratio unused).
  const Goodput& closed() const { return closed_; }

  // The newest attempt observe() has been fed with (0: none yet): the attempts after the
  // one it last saw are those whose endings it has still to judge.
  int attempt_seen() const { return attempt_seen_; }

  // At start: the ledger a stored memo kept (job_memo.h).
  void resume(std::deque<Interruption> entries, std::map<InterruptionKind, CauseTotals> totals,
              uint64_t count, Goodput closed, int attempt_seen) {
    entries_ = std::move(entries);
    totals_ = std::move(totals);
    count_ = count;
    closed_ = closed;
    attempt_seen_ = attempt_seen;
  }

 private:
  void close(Interruption& i, const JobState& job, MonoTime now);
  bool attribute(Interruption& i, const JobVerdict& v, const JobState& job);
  bool reclass_by_outcome(Interruption& i, const JobState& job);
  static bool keep_better_stacks(Interruption& i, const JobVerdict& v, const JobState& job);
  // What observe() does, without counting the revision: whether the ledger changed.
  bool update(const JobState& job, const JobVerdict& v, MonoTime now, SystemTime wall);
  // Opens an interruption from the verdict, or follows or closes the open one.
  bool follow_verdict(const JobState& job, const JobVerdict& v, MonoTime now, SystemTime wall);
  // Records the ending of an attempt that stopped short between two verdicts; whether the
  // ledger changed (a new attempt seen is a change: the memo keeps attempt_seen_).
  bool judge_new_attempts(const JobState& job, MonoTime now, SystemTime wall);
  // Whether an interruption of attempt `a` was detected once its ranks had ended: it is
  // that ending's, closed or not.
  bool recorded(const AttemptRecord& a) const;
  void add(Interruption i);

  std::deque<Interruption> entries_;
  std::map<InterruptionKind, CauseTotals> totals_;
  uint64_t count_ = 0;
  uint64_t revision_ = 0;
  Goodput closed_;  // the lost times of the interruptions already closed (wall and ratio unused)
  int attempt_seen_ = 0;
};

}  // namespace trainwatch::jobs
