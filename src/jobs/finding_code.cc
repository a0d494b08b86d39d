#include "jobs/finding_code.h"

#include "core/enum_names.h"

namespace trainwatch::jobs {

namespace {

// The texts are the API's, the labels' and the store's: never change one (finding_code.h).
constexpr EnumNames<FindingCode, 44> kFindingCodeNames{{
    {FindingCode::kUnknown, "unknown"},
    {FindingCode::kRankGone, "rank_gone"},
    {FindingCode::kRankFailed, "rank_failed"},
    {FindingCode::kRankStopped, "rank_stopped"},
    {FindingCode::kRankBlocked, "rank_blocked"},
    {FindingCode::kRankStuck, "rank_stuck"},
    {FindingCode::kCollectiveMismatch, "collective_mismatch"},
    {FindingCode::kRankSuspected, "rank_suspected"},
    {FindingCode::kJobStalled, "job_stalled"},
    {FindingCode::kRankHung, "rank_hung"},
    {FindingCode::kStartupStuck, "startup_stuck"},
    {FindingCode::kRanksMissing, "ranks_missing"},
    {FindingCode::kNoReports, "no_reports"},
    {FindingCode::kRestarting, "restarting"},
    {FindingCode::kLossNotFinite, "loss_not_finite"},
    {FindingCode::kOverflowStreak, "overflow_streak"},
    {FindingCode::kLossScaleMin, "loss_scale_min"},
    {FindingCode::kCheckpointFailed, "checkpoint_failed"},
    {FindingCode::kCheckpointTooLong, "checkpoint_too_long"},
    {FindingCode::kCheckpointOverdue, "checkpoint_overdue"},
    {FindingCode::kEvaluationTooLong, "evaluation_too_long"},
    {FindingCode::kStraggler, "straggler"},
    {FindingCode::kThroughputDrop, "throughput_drop"},
    {FindingCode::kNodeSilent, "node_silent"},
    {FindingCode::kMonitoringLost, "monitoring_lost"},
    {FindingCode::kDiskMissing, "disk_missing"},
    {FindingCode::kDiskLow, "disk_low"},
    {FindingCode::kMemoryLow, "memory_low"},
    {FindingCode::kRendezvousClosed, "rendezvous_closed"},
    {FindingCode::kSlotRemoved, "slot_removed"},
    {FindingCode::kRankClaimedTwice, "rank_claimed_twice"},
    {FindingCode::kGpuLost, "gpu_lost"},
    {FindingCode::kGpuEcc, "gpu_ecc"},
    {FindingCode::kGpuXid, "gpu_xid"},
    {FindingCode::kGpuRowRemapPending, "gpu_row_remap_pending"},
    {FindingCode::kGpuRowRemapFailed, "gpu_row_remap_failed"},
    {FindingCode::kGpuRecoveryAction, "gpu_recovery_action"},
    {FindingCode::kNvlinkDown, "nvlink_down"},
    {FindingCode::kGpuPagesPending, "gpu_pages_pending"},
    {FindingCode::kGpuHot, "gpu_hot"},
    {FindingCode::kGpuThrottled, "gpu_throttled"},
    {FindingCode::kGpuMemory, "gpu_memory"},
    {FindingCode::kIbPortDown, "ib_port_down"},
    {FindingCode::kIbLinkDowned, "ib_link_downed"},
}};
static_assert(kFindingCodeNames.size() == static_cast<std::size_t>(FindingCode::kIbLinkDowned) + 1,
              "every finding code has its text");

}  // namespace

std::string_view to_string(FindingCode code) { return name_of(kFindingCodeNames, code); }

std::optional<FindingCode> finding_code_from_string(std::string_view text) {
  return value_of(kFindingCodeNames, text);
}

}  // namespace trainwatch::jobs
