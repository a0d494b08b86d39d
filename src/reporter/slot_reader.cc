#include "reporter/slot_reader.h"

#include <atomic>

#include "trainwatch/trainwatch.h"

namespace trainwatch::reporter {
namespace {

constexpr auto kRelaxed = std::memory_order_relaxed;

void copy_fields(const Slot& s, uint64_t owner, SlotSnapshot* o) {
  o->status = s.status.load(kRelaxed);
  o->rank = s.rank.load(kRelaxed);
  o->local_rank = s.local_rank.load(kRelaxed);
  o->world_size = s.world_size.load(kRelaxed);
  o->master_port = s.master_port.load(kRelaxed);
  o->started_at_ms = s.started_at_ms.load(kRelaxed);
  o->status_changed_ms = s.status_changed_ms.load(kRelaxed);
  o->master_addr = s.master_addr.load();
  o->job = s.job.load();
  o->step = s.step.load(kRelaxed);
  o->step_reports = s.step_reports.load(kRelaxed);
  o->loss = bits_double(s.loss_bits.load(kRelaxed));
  o->loss_scale = bits_double(s.loss_scale_bits.load(kRelaxed));
  o->grad_norm = bits_double(s.grad_norm_bits.load(kRelaxed));
  o->overflow_total = s.overflow_total.load(kRelaxed);
  o->overflow_consecutive = s.overflow_consecutive.load(kRelaxed);
  o->samples = s.samples.load(kRelaxed);
  o->tokens = s.tokens.load(kRelaxed);
  o->present = s.present.load(kRelaxed);
  o->pipeline_stage = s.pipeline_stage.load(kRelaxed);
  o->gemini_oom_events = s.gemini_oom_events.load(kRelaxed);
  o->kernels_compiled = s.kernels_compiled.load(kRelaxed) != 0;
  o->checkpoint_state = static_cast<CheckpointState>(s.checkpoint_state.load(kRelaxed));
  o->checkpoint_step = s.checkpoint_step.load(kRelaxed);
  o->checkpoint_begin_ms = s.checkpoint_begin_ms.load(kRelaxed);
  o->checkpoint_end_ms = s.checkpoint_end_ms.load(kRelaxed);
  o->checkpoint_bytes = s.checkpoint_bytes.load(kRelaxed);
  o->last_ok_checkpoint_step = s.last_ok_checkpoint_step.load(kRelaxed);
  o->last_ok_checkpoint_ms = s.last_ok_checkpoint_ms.load(kRelaxed);
  o->checkpoint_path = s.checkpoint_path.load();
  o->error_ms = s.error_ms.load(kRelaxed);
  o->error = s.error.load();
  o->gauges.clear();
  for (const auto& g : s.gauges) {
    std::string name = g.name.load();
    if (!name.empty()) o->gauges.push_back({std::move(name), bits_double(g.value_bits.load(kRelaxed))});
  }
  o->has_identity = s.identity_owner.load(kRelaxed) == owner;
  o->attempt = o->has_identity ? s.attempt.load(kRelaxed) : 0;
  o->node_rank = o->has_identity ? s.node_rank.load(kRelaxed) : -1;
  o->run_id = o->has_identity ? s.run_id.load() : std::string();
  o->has_nonfinite = s.nonfinite_owner.load(kRelaxed) == owner;
  o->nonfinite_total = o->has_nonfinite ? s.nonfinite_total.load(kRelaxed) : 0;
  o->nonfinite_first_step = o->has_nonfinite ? s.nonfinite_first_step.load(kRelaxed) : -1;
  o->nonfinite_first_report = o->has_nonfinite ? s.nonfinite_first_report.load(kRelaxed) : 0;
  o->has_activity = s.activity_owner.load(kRelaxed) == owner;
  o->collectives = o->has_activity ? s.collectives.load(kRelaxed) : 0;
  o->activity = o->has_activity ? s.activity.load(kRelaxed) : 0;
}

}  // namespace

ReadResult read_slot(const Slot& slot, SlotSnapshot* out, int max_tries) {
  uint64_t owner = slot.owner.load(std::memory_order_acquire);
  if (owner == 0) return ReadResult::kEmpty;
  for (int i = 0; i < max_tries; ++i) {
    uint32_t before = slot.seq.load(std::memory_order_acquire);
    if (before & 1u) continue;
    copy_fields(slot, owner, out);
    std::atomic_thread_fence(std::memory_order_acquire);
    uint32_t after = slot.seq.load(kRelaxed);
    if (before == after) {
      out->owner = owner;
      out->pid = owner_pid(owner);
      out->start_ticks = owner_start_ticks(owner);
      out->seq = before;
      return ReadResult::kOk;
    }
  }
  return ReadResult::kBusy;
}

// The slot holds the C header's numbers; RankStatus is them.
static_assert(static_cast<uint32_t>(RankStatus::kInitializing) == TW_STATUS_INITIALIZING);
static_assert(static_cast<uint32_t>(RankStatus::kTraining) == TW_STATUS_TRAINING);
static_assert(static_cast<uint32_t>(RankStatus::kCheckpointing) == TW_STATUS_CHECKPOINTING);
static_assert(static_cast<uint32_t>(RankStatus::kEvaluating) == TW_STATUS_EVALUATING);
static_assert(static_cast<uint32_t>(RankStatus::kFinished) == TW_STATUS_FINISHED);
static_assert(static_cast<uint32_t>(RankStatus::kFailed) == TW_STATUS_FAILED);
static_assert(kRankStatusNames.size() == TW_STATUS_FAILED + 1, "a word for every status");

std::string_view status_name(uint32_t status) {
  if (status >= kRankStatusNames.size()) return "unknown";
  return to_string(static_cast<RankStatus>(status));
}

}  // namespace trainwatch::reporter
