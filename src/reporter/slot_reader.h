// A consistent copy of one slot, taken under the seqlock by a reader in any process.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "reporter/slot_layout.h"

namespace trainwatch::reporter {

struct GaugeValue {
  std::string name;
  double value = 0;
};

struct SlotSnapshot {
  uint64_t owner = 0;
  int32_t pid = 0;
  uint64_t start_ticks = 0;
  uint32_t seq = 0;
  uint32_t status = 0;  // tw_run_status
  int32_t rank = -1, local_rank = -1, world_size = 0, master_port = 0;
  int64_t started_at_ms = 0, status_changed_ms = 0;
  std::string master_addr, job;
  int64_t step = -1;
  uint64_t step_reports = 0;
  double loss = 0, loss_scale = 0, grad_norm = 0;
  uint64_t overflow_total = 0, overflow_consecutive = 0, samples = 0, tokens = 0;
  uint32_t present = 0;  // TW_FIELD_* bits
  int32_t pipeline_stage = -1;
  uint64_t gemini_oom_events = 0;
  bool kernels_compiled = false;
  CheckpointState checkpoint_state = CheckpointState::kNone;
  int64_t checkpoint_step = -1, checkpoint_begin_ms = 0, checkpoint_end_ms = 0;
  uint64_t checkpoint_bytes = 0;
  int64_t last_ok_checkpoint_step = -1, last_ok_checkpoint_ms = 0;
  std::string checkpoint_path;
  int64_t error_ms = 0;
  std::string error;
  std::vector<GaugeValue> gauges;
  // The launch identity, when the slot's writer recorded one (slot_layout.h: an older
  // library's slot has none).
  bool has_identity = false;
  int32_t attempt = 0;
  int32_t node_rank = -1;
  std::string run_id;
  // Non-finite losses, when the slot's writer keeps them (slot_layout.h: an older library's
  // slot has none): how many steps reported one, and the first step of the latest run of
  // them (-1: none yet) with its step_reports ordinal, which tells two runs apart.
  bool has_nonfinite = false;
  uint64_t nonfinite_total = 0;
  int64_t nonfinite_first_step = -1;
  uint64_t nonfinite_first_report = 0;
  // The activity record, when the slot's writer keeps one (slot_layout.h): the collectives
  // entered, and the activity word (the kind of the current or last one, inside it, phase).
  bool has_activity = false;
  uint64_t collectives = 0;
  uint64_t activity = 0;
};

enum class ReadResult { kOk, kEmpty, kBusy };

// Copies the slot. kEmpty: never claimed. kBusy: the writer kept it odd or changing for
// max_tries attempts (a writer that died mid-update leaves it odd forever: the caller treats
// that slot as unreadable rather than spinning).
ReadResult read_slot(const Slot& slot, SlotSnapshot* out, int max_tries = 256);

// The word for a slot's status (kRankStatusNames); "unknown" for a number outside it (a
// newer writer's).
std::string_view status_name(uint32_t status);

}  // namespace trainwatch::reporter
