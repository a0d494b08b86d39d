// FindingCode: what a job finding (jobs/analysis.h) names, typed, so that the analysis, the
// interruption ledger and the kept stacks decide on a value, not a spelling. Each code's text
// is in one table (finding_code.cc) and is the wire vocabulary: `code` in /api/v1/jobs and
// its interruptions, the `reason` label of trainwatch_job_down (jobs/culprit_labels.h), the
// alert's labels, the job memos in the store and docs/api.md. A text never changes once
// shipped; a new code gets a new text.
//
// Reading back: finding_code_from_string gives nullopt for a text the table does not hold
// (a memo written by a newer server, or a code since retired). The memo reader keeps such an
// interruption as kUnknown ("unknown") rather than dropping it: its cause, message and
// times still count; only its code is lost.
#pragma once

#include <optional>
#include <string_view>

namespace trainwatch::jobs {

enum class FindingCode {
  kUnknown,  // read back from a store that named a code this server does not know
  // A rank's own process (the shared rule, core/rank_rule.h).
  kRankGone,
  kRankFailed,
  kRankStopped,
  kRankBlocked,
  // Stalls and hangs (jobs/stall_findings.cc).
  kRankStuck,
  kCollectiveMismatch,
  kRankSuspected,
  kJobStalled,
  kRankHung,
  kStartupStuck,
  // Start-up and restarts (jobs/analysis.cc).
  kRanksMissing,
  kNoReports,
  kRestarting,
  // Numbers (jobs/loss_findings.cc, jobs/analysis.cc).
  kLossNotFinite,
  kOverflowStreak,
  kLossScaleMin,
  // Checkpoints and evaluations (jobs/analysis.cc).
  kCheckpointFailed,
  kCheckpointTooLong,
  kCheckpointOverdue,
  kEvaluationTooLong,
  // Pace (jobs/pace_findings.cc).
  kStraggler,
  kThroughputDrop,
  // Nodes (jobs/node_findings.cc).
  kNodeSilent,
  kMonitoringLost,
  kDiskMissing,
  kDiskLow,
  kMemoryLow,
  kRendezvousClosed,
  kSlotRemoved,
  kRankClaimedTwice,
  // GPUs and the fabric (jobs/gpu_findings.cc).
  kGpuLost,
  kGpuEcc,
  kGpuXid,
  kGpuRowRemapPending,
  kGpuRowRemapFailed,
  kGpuRecoveryAction,
  kNvlinkDown,
  kGpuPagesPending,
  kGpuHot,
  kGpuThrottled,
  kGpuMemory,
  kIbPortDown,
  kIbLinkDowned,
};

std::string_view to_string(FindingCode code);
std::optional<FindingCode> finding_code_from_string(std::string_view text);

// A hang that names the ranks the others wait for, from their stacks or system calls: the
// culprit stuck outside the collective, or the ranks in a different one.
constexpr bool names_waited_for(FindingCode c) {
  return c == FindingCode::kRankStuck || c == FindingCode::kCollectiveMismatch;
}

// A hang seen by the clock alone (no step for the step timeout), before the stacks place it.
constexpr bool unplaced_hang(FindingCode c) {
  return c == FindingCode::kJobStalled || c == FindingCode::kRankHung;
}

// Any hang: the ranks are alive and no longer step.
constexpr bool is_hang(FindingCode c) { return names_waited_for(c) || unplaced_hang(c); }

// A finding that names the ranks suspected of holding a stall up, early or at its timeout.
constexpr bool suspects_culprit(FindingCode c) {
  return c == FindingCode::kRankSuspected || c == FindingCode::kCollectiveMismatch;
}

// Bad numbers: a non-finite loss, a run of overflows, the loss scale at its floor.
constexpr bool is_numbers(FindingCode c) {
  return c == FindingCode::kLossNotFinite || c == FindingCode::kOverflowStreak ||
         c == FindingCode::kLossScaleMin;
}

// A fault of a GPU itself or its links (a node fault when down: the node needs a reset or
// service). kGpuXid is one, whatever its severity.
constexpr bool is_gpu_fault(FindingCode c) {
  return c == FindingCode::kGpuLost || c == FindingCode::kGpuEcc || c == FindingCode::kGpuXid ||
         c == FindingCode::kGpuRowRemapPending || c == FindingCode::kGpuRowRemapFailed ||
         c == FindingCode::kGpuRecoveryAction || c == FindingCode::kNvlinkDown;
}

// The job never got going: ranks that did not come, a start-up that does not end, no report.
constexpr bool is_startup(FindingCode c) {
  return c == FindingCode::kStartupStuck || c == FindingCode::kRanksMissing || c == FindingCode::kNoReports;
}

}  // namespace trainwatch::jobs
