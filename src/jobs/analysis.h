// Job analysis: from a JobState and the job's thresholds, at one instant, the findings (a
// named cause, who, and the evidence) and the verdict the engine's state machine receives.
// Pure: same state, spec and instant, same verdict. Unit-tested on a manual clock.
//
// First-failure attribution (docs/failure-modes.md): findings are ordered so that the rank that
// failed first and silently is blamed, after any fault of a node's hardware (a GPU lost or
// needing a reset, a link down: jobs/gpu_findings.h), which explains its ranks. With gloo,
// a SIGKILLed rank's peers raise "Connection closed by peer" within 0.1-0.4 s and report
// `failed`; the victim reports nothing. So a silent vanish outranks a node gone silent,
// which outranks a stopped or blocked process, a stall, bad numbers and checkpoints, and
// only then come ranks that failed with an error of their own. Within a kind, the earliest
// is first; of deaths the agent saw at the same instant, one by SIGTERM (a launcher ending
// the survivors) comes last.
//
// While the first finding is a reported error (then the only kind of failure) or a
// non-finite loss, and some node whose ranks were running has not reported since it
// began, the verdict is `undecided`: the culprit may be on that node, and its report (or
// its silence, after node_silent_after) decides. So does, for up to 2 s, every node with
// running ranks when the error is a broken connection to a peer ("Connection closed by
// peer"...): the peer's death caused it, and even the failed rank's own agent may report
// the error before it has seen that peer gone. A non-finite loss is timed by the first
// step of its run, not by the report's arrival, so the rank that went bad first is named
// whichever node spoke first, and stays named as the others report.
//
// A silent node is down (node_silent) unless the ranks of the other nodes went on stepping
// after its last report: in a synchronous job they cannot step without its ranks, so only
// its agent is lost, and that is a warning (monitoring_lost), not a page.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/clock.h"
#include "jobs/finding_code.h"
#include "jobs/job_phase.h"
#include "jobs/job_state.h"

namespace trainwatch::jobs {

enum class Severity { kDown, kWarning };
std::string_view to_string(Severity s);

struct Finding {
  FindingCode code = FindingCode::kUnknown;  // what it names; its text is the API's (finding_code.h)
  Severity severity = Severity::kDown;
  std::vector<int> ranks;  // who (may be empty for node-level findings)
  std::string node;        // where ("" when job-wide)
  std::string message;     // who and the evidence, one sentence
  int order = 0;           // attribution order: lower is blamed first
  MonoTime since{};        // when it began, on the server's clock
  // For a finding a timeout decides (a hang, a silent node, a stuck start-up), `since` is
  // when the timeout was crossed; this is the last sign of progress before it (the last
  // step, the node's last report), where the interruption ledger dates the failure.
  std::optional<MonoTime> last_progress = std::nullopt;
  // A warning worth a message to the job's channels (those that do not page), not only a
  // line on its page: the early culprit warning (rank_suspected).
  bool notify = false;
  // The node's hardware is at fault (a GPU to reset, a node to reboot, a link down: see
  // jobs/gpu_findings.h), not the application: `node` is the one to drain or repair.
  bool node_fault = false;
  // A rank that died of SIGTERM: what a launcher (torchrun, srun) sends the survivors when
  // one rank dies. Deaths the agent saw in one look share `since`; there another death is
  // blamed first, or the launcher's first victim (rank 0) would be named for the rank
  // that broke.
  bool terminated = false;
};

struct JobTimeouts {
  Millis startup{0}, step{0}, checkpoint{0};
  bool step_learned = false, checkpoint_learned = false;
  std::optional<Millis> smoothed_step_gap;
};

struct JobVerdict {
  JobPhase phase = JobPhase::kWaiting;
  std::vector<Finding> findings;  // down first, in attribution order; then warnings
  bool down = false;
  bool undecided = false;
  std::string cause;    // down: the alert text; else the warnings joined by "; "
  bool notify = false;  // not down, and a warning to send (Finding::notify)
  JobTimeouts timeouts;
};

// Non-finite losses: a run of this many steps in a row, still going on, pages; a shorter run,
// or one that ended, is a warning on the job's page for kNonfiniteNoticeFor after it began.
inline constexpr uint64_t kNonfiniteStreak = 5;
inline constexpr Millis kNonfiniteNoticeFor{5 * 60'000};

// Straggler evidence: at least this many steps in the window, and the rank's extra cost a
// step must exceed this (tiny CPU jobs jitter by fractions of a millisecond). Steps of a
// process's warm-up count for nobody (kStragglerWarmupSteps, job_state.h), and a rank not stepping (its last
// step older than kStragglerIdleGaps of the job's step gaps at its last report) is no straggler: it is stuck,
// and its CPU over the steps it made before says nothing of a step's cost.
inline constexpr uint64_t kStragglerMinSteps = 10;
inline constexpr double kStragglerMinExcessS = 0.002;
inline constexpr int kStragglerIdleGaps = 3;
// Throughput drop: the mean of the windows of progress over the last kThroughputRecentSpan
// (kThroughputRecent at least) below the fraction of the median of the training windows
// before them, which must number at least kThroughputBaseline. A stall (no progress) is a
// drop once it outlasts early_warning_after() unexplained: its last kThroughputRecent
// windows all below that fraction.
inline constexpr size_t kThroughputRecent = 3;
inline constexpr Millis kThroughputRecentSpan{10'000};
inline constexpr size_t kThroughputBaseline = 6;

// The early culprit warning (rank_suspected): a job with no step for this long, whose
// stacks or system calls show a strict minority of ranks outside where the others wait,
// warns naming them; the page stays at the step timeout. 4x the smoothed step gap (the
// longest gap of recent report windows: above the p99) with a floor of 6 s, so that the
// warning, a report interval and a check later, reaches the channels within
// max(10 s, 5x the gap) of the last step.
inline constexpr Millis kEarlyWarningFloor{6'000};
inline constexpr double kEarlyWarningGaps = 4.0;
Millis early_warning_after(std::optional<Millis> smoothed_step_gap);

// A later attempt's start-up timeout: this many times the longest start-up of the
// attempts before it, at least the floor, never more than the configured one.
inline constexpr int kLearnedStartupFactor = 3;
inline constexpr Millis kLearnedStartupFloor{60'000};

JobVerdict analyse(const JobState& job, const JobCheckSpec& spec, MonoTime now, SystemTime wall_now);

// The time a person reads: "12:03:11 UTC".
std::string clock_time(SystemTime t);

}  // namespace trainwatch::jobs
