// The C ABI (include/trainwatch/trainwatch.h). Nothing here throws past the boundary:
// tw_open catches everything (it allocates); the other calls do not allocate.
#include <time.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "reporter/fork_guard.h"
#include "reporter/handle.h"
#include "reporter/open_failure.h"
#include "reporter/options.h"
#include "reporter/process_info.h"
#include "trainwatch/trainwatch.h"

using trainwatch::reporter::WriteSection;
namespace rp = trainwatch::reporter;

namespace {

constexpr auto kRelaxed = std::memory_order_relaxed;

tw_handle g_noop_handle;  // shared by every failed open; has no slot, so every call is a no-op
thread_local std::string g_last_error;

int64_t wall_ms() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

tw_status fail_open(tw_status status, const std::string& why, tw_handle** out) {
  g_last_error = "trainwatch: " + why + "; training continues without trainwatch reporting";
  std::fprintf(stderr, "%s\n", g_last_error.c_str());
  if (out) *out = &g_noop_handle;
  return status;
}

tw_status status_of(const trainwatch::Error& e) {
  if (e.code == "version") return TW_ERR_VERSION;
  if (e.code == "io" || e.code == "unsafe") return TW_ERR_IO;
  if (e.code == "argument") return TW_ERR_INVALID_ARGUMENT;
  return TW_ERR_ENVIRONMENT;
}

// Takes ownership of the slot: free, ours already, or left by a dead process.
// Returns the live owner's pid when another process holds it, 0 on success.
int32_t claim(rp::Slot* slot, uint64_t me) {
  uint64_t current = slot->owner.load(std::memory_order_acquire);
  for (;;) {
    if (current == me) return 0;
    if (current != 0) {
      auto info = rp::read_process(rp::owner_pid(current));
      if (!rp::is_dead(info, rp::owner_start_ticks(current))) return rp::owner_pid(current);
    }
    if (slot->owner.compare_exchange_weak(current, me, std::memory_order_acq_rel)) return 0;
  }
}

// Resets every field of a (re)claimed slot in one write section. A previous owner may have
// died inside a write section and left seq odd: start from the next even value.
void reset_slot(tw_handle* h, const rp::RankOptions& o, uint64_t me) {
  rp::Slot* s = h->slot;
  uint32_t seq = s->seq.load(kRelaxed);
  h->seq = (seq & 1u) ? seq + 1 : seq;
  WriteSection w(h);
  int64_t now = wall_ms();
  s->status.store(TW_STATUS_INITIALIZING, kRelaxed);
  s->rank.store(o.rank, kRelaxed);
  s->local_rank.store(o.local_rank, kRelaxed);
  s->world_size.store(o.world_size, kRelaxed);
  s->master_port.store(o.master_port, kRelaxed);
  s->started_at_ms.store(now, kRelaxed);
  s->status_changed_ms.store(now, kRelaxed);
  s->master_addr.store(o.master_addr);
  s->job.store(o.job);
  s->step.store(-1, kRelaxed);
  s->step_reports.store(0, kRelaxed);
  s->loss_bits.store(rp::double_bits(0), kRelaxed);
  s->loss_scale_bits.store(rp::double_bits(0), kRelaxed);
  s->grad_norm_bits.store(rp::double_bits(0), kRelaxed);
  s->overflow_total.store(0, kRelaxed);
  s->overflow_consecutive.store(0, kRelaxed);
  s->samples.store(0, kRelaxed);
  s->tokens.store(0, kRelaxed);
  s->present.store(0, kRelaxed);
  s->pipeline_stage.store(-1, kRelaxed);
  s->gemini_oom_events.store(0, kRelaxed);
  s->kernels_compiled.store(0, kRelaxed);
  s->checkpoint_state.store(static_cast<uint32_t>(rp::CheckpointState::kNone), kRelaxed);
  s->checkpoint_step.store(-1, kRelaxed);
  s->checkpoint_begin_ms.store(0, kRelaxed);
  s->checkpoint_end_ms.store(0, kRelaxed);
  s->checkpoint_bytes.store(0, kRelaxed);
  s->last_ok_checkpoint_step.store(-1, kRelaxed);
  s->last_ok_checkpoint_ms.store(0, kRelaxed);
  s->checkpoint_path.store("");
  s->nonfinite_owner.store(me, kRelaxed);
  s->nonfinite_total.store(0, kRelaxed);
  s->nonfinite_first_step.store(-1, kRelaxed);
  s->nonfinite_first_report.store(0, kRelaxed);
  s->error_ms.store(0, kRelaxed);
  s->error.store("");
  for (auto& g : s->gauges) {
    g.name.store("");
    g.value_bits.store(0, kRelaxed);
  }
  s->activity_owner.store(me, kRelaxed);
  s->collectives.store(0, kRelaxed);
  s->activity.store(0, kRelaxed);
  s->identity_owner.store(me, kRelaxed);
  s->attempt.store(o.attempt, kRelaxed);
  s->node_rank.store(o.node_rank, kRelaxed);
  s->run_id.store(o.run_id);
}

tw_status open_impl(const tw_options* options, tw_handle** out) {
  auto resolved = rp::resolve_options(options, rp::process_env());
  if (!resolved) return fail_open(status_of(resolved.error()), resolved.error().message, out);
  const rp::RankOptions& o = *resolved;
  for (const auto& warning : o.warnings) std::fprintf(stderr, "trainwatch: %s\n", warning.c_str());
  auto file = rp::SlotFile::open_for_writing(o.dir, o.job, o.group);
  if (!file) return fail_open(status_of(file.error()), file.error().message, out);

  auto h = std::make_unique<tw_handle>();
  h->file.emplace(std::move(*file));
  h->slot = h->file->slot(static_cast<uint32_t>(o.local_rank));
  h->pid = rp::watch_forks();
  uint64_t me = rp::pack_owner(h->pid, rp::self_start_ticks());
  if (int32_t holder = claim(h->slot, me); holder != 0) {
    return fail_open(TW_ERR_CLAIMED,
                     "rank " + std::to_string(o.rank) + " (local rank " + std::to_string(o.local_rank) +
                         ") of job '" + o.job + "' is already reported by live pid " +
                         std::to_string(holder) + " in " + h->file->path(),
                     out);
  }
  reset_slot(h.get(), o, me);
  g_last_error.clear();
  if (out) *out = h.release();
  return TW_OK;
}

tw_status gauge_impl(tw_handle* h, const char* name, double value);

// A handle writes only in the process that opened it: in a forked child every call is a
// no-op, so the child never reports as its parent (fork_guard.h; one load, no syscall).
inline bool writable(const tw_handle* h) {
  return h != nullptr && h->slot != nullptr && h->pid == rp::current_pid();
}
inline tw_status not_writable(const tw_handle* h) { return h ? TW_ERR_DISABLED : TW_ERR_INVALID_ARGUMENT; }

// Counts a non-finite loss and marks the first step of each run of them (slot_layout.h).
// Inside the step's write section, after step_reports moved on: stores only, no clock.
void note_loss(tw_handle* h, int64_t step, double loss) {
  if (std::isfinite(loss)) {
    h->in_nonfinite_run = false;
    return;
  }
  rp::Slot* s = h->slot;
  s->nonfinite_total.store(++h->nonfinite_total, kRelaxed);
  if (!h->in_nonfinite_run) {
    h->in_nonfinite_run = true;
    s->nonfinite_first_step.store(step, kRelaxed);
    s->nonfinite_first_report.store(h->step_reports, kRelaxed);
  }
}

void set_status_locked(tw_handle* h, uint32_t status) {
  h->status = status;
  h->slot->status.store(status, kRelaxed);
  h->slot->status_changed_ms.store(wall_ms(), kRelaxed);
}

}  // namespace

extern "C" {

tw_status tw_open(const tw_options* options, tw_handle** out) {
  try {
    return open_impl(options, out);
  } catch (...) {
    return fail_open(TW_ERR_IO, rp::open_failure_reason(), out);
  }
}

tw_status tw_close(tw_handle* handle) {
  if (handle == nullptr) return TW_ERR_INVALID_ARGUMENT;
  if (handle != &g_noop_handle) delete handle;
  return TW_OK;
}

int tw_is_enabled(const tw_handle* handle) { return writable(handle) ? 1 : 0; }

const char* tw_last_error(void) { return g_last_error.c_str(); }

tw_status tw_set_status(tw_handle* h, tw_run_status status) {
  if (static_cast<uint32_t>(status) > TW_STATUS_FAILED) return TW_ERR_INVALID_ARGUMENT;
  if (!writable(h)) return not_writable(h);
  WriteSection w(h);
  set_status_locked(h, status);
  return TW_OK;
}

tw_status tw_step(tw_handle* h, int64_t step, double loss) {
  if (!writable(h)) return not_writable(h);
  rp::Slot* s = h->slot;
  WriteSection w(h);
  s->step.store(step, kRelaxed);
  s->loss_bits.store(rp::double_bits(loss), kRelaxed);
  s->step_reports.store(++h->step_reports, kRelaxed);
  note_loss(h, step, loss);
  if (!(h->present & TW_FIELD_LOSS)) {
    h->present |= TW_FIELD_LOSS;
    s->present.store(h->present, kRelaxed);
  }
  return TW_OK;
}

tw_status tw_step_ex(tw_handle* h, const tw_step_info* info) {
  if (info == nullptr || info->struct_size < sizeof(tw_step_info)) return TW_ERR_INVALID_ARGUMENT;
  if (!writable(h)) return not_writable(h);
  rp::Slot* s = h->slot;
  uint32_t f = info->fields;
  WriteSection w(h);
  s->step.store(info->step, kRelaxed);
  s->step_reports.store(++h->step_reports, kRelaxed);
  if (f & TW_FIELD_LOSS) {
    s->loss_bits.store(rp::double_bits(info->loss), kRelaxed);
    note_loss(h, info->step, info->loss);
  }
  if (f & TW_FIELD_LOSS_SCALE) s->loss_scale_bits.store(rp::double_bits(info->loss_scale), kRelaxed);
  if (f & TW_FIELD_GRAD_NORM) s->grad_norm_bits.store(rp::double_bits(info->grad_norm), kRelaxed);
  if (f & TW_FIELD_OVERFLOW) {
    if (info->overflow) {
      s->overflow_total.store(++h->overflow_total, kRelaxed);
      s->overflow_consecutive.store(++h->overflow_consecutive, kRelaxed);
    } else if (h->overflow_consecutive != 0) {
      h->overflow_consecutive = 0;
      s->overflow_consecutive.store(0, kRelaxed);
    }
  }
  if (f & TW_FIELD_SAMPLES) s->samples.store(h->samples += info->samples, kRelaxed);
  if (f & TW_FIELD_TOKENS) s->tokens.store(h->tokens += info->tokens, kRelaxed);
  if ((h->present | f) != h->present) {
    h->present |= f;
    s->present.store(h->present, kRelaxed);
  }
  return TW_OK;
}

tw_status tw_checkpoint_begin(tw_handle* h, int64_t step, const char* path) {
  if (!writable(h)) return not_writable(h);
  rp::Slot* s = h->slot;
  WriteSection w(h);
  if (h->status != TW_STATUS_CHECKPOINTING) h->status_before_checkpoint = h->status;
  set_status_locked(h, TW_STATUS_CHECKPOINTING);
  s->checkpoint_state.store(static_cast<uint32_t>(rp::CheckpointState::kInProgress), kRelaxed);
  s->checkpoint_step.store(step, kRelaxed);
  s->checkpoint_begin_ms.store(wall_ms(), kRelaxed);
  s->checkpoint_end_ms.store(0, kRelaxed);
  s->checkpoint_bytes.store(0, kRelaxed);
  s->checkpoint_path.store(path ? path : "");
  return TW_OK;
}

tw_status tw_checkpoint_end(tw_handle* h, int ok, uint64_t bytes) {
  if (!writable(h)) return not_writable(h);
  rp::Slot* s = h->slot;
  int64_t now = wall_ms();
  WriteSection w(h);
  auto state = ok ? rp::CheckpointState::kOk : rp::CheckpointState::kFailed;
  s->checkpoint_state.store(static_cast<uint32_t>(state), kRelaxed);
  s->checkpoint_end_ms.store(now, kRelaxed);
  s->checkpoint_bytes.store(bytes, kRelaxed);
  if (ok) {
    s->last_ok_checkpoint_step.store(s->checkpoint_step.load(kRelaxed), kRelaxed);
    s->last_ok_checkpoint_ms.store(now, kRelaxed);
  }
  if (h->status == TW_STATUS_CHECKPOINTING) set_status_locked(h, h->status_before_checkpoint);
  return TW_OK;
}

tw_status tw_error(tw_handle* h, const char* message) {
  if (message == nullptr) return TW_ERR_INVALID_ARGUMENT;
  if (!writable(h)) return not_writable(h);
  WriteSection w(h);
  h->slot->error_ms.store(wall_ms(), kRelaxed);
  h->slot->error.store(message);
  return TW_OK;
}

tw_status tw_gauge(tw_handle* h, const char* name, double value) {
  if (name == nullptr || *name == '\0') return TW_ERR_INVALID_ARGUMENT;
  if (!writable(h)) return not_writable(h);
  try {
    return gauge_impl(h, name, value);
  } catch (...) {  // the name comparison allocates; never let that escape
    return TW_ERR_INVALID_ARGUMENT;
  }
}

}  // extern "C"

namespace {
tw_status gauge_impl(tw_handle* h, const char* name, double value) {
  std::string_view wanted(name, strnlen(name, rp::GaugeCell{}.name.kCapacity));
  for (auto& g : h->slot->gauges) {
    std::string current = g.name.load();
    if (current.empty() || current == wanted) {
      WriteSection w(h);
      if (current.empty()) g.name.store(wanted);
      g.value_bits.store(rp::double_bits(value), kRelaxed);
      return TW_OK;
    }
  }
  return TW_ERR_INVALID_ARGUMENT;
}
}  // namespace

extern "C" {

// Outside the seqlock: each word stands alone (slot_layout.h), and a reader sampling which
// collective a rank is in must never have to retry.
tw_status tw_collective_begin(tw_handle* h, tw_collective kind) {
  if (!writable(h)) return not_writable(h);
  const auto k = static_cast<uint64_t>(kind) <= TW_COLLECTIVE_RECV ? static_cast<uint64_t>(kind) : 0;
  h->slot->collectives.store(++h->collectives, kRelaxed);
  h->activity = (h->activity & ~(rp::kActivityKindMask | rp::kActivityInside)) | k | rp::kActivityInside;
  h->slot->activity.store(h->activity, kRelaxed);
  return TW_OK;
}

tw_status tw_collective_end(tw_handle* h) {
  if (!writable(h)) return not_writable(h);
  h->activity &= ~rp::kActivityInside;
  h->slot->activity.store(h->activity, kRelaxed);
  return TW_OK;
}

tw_status tw_set_phase(tw_handle* h, tw_phase phase) {
  if (static_cast<uint32_t>(phase) > TW_PHASE_WARMUP) return TW_ERR_INVALID_ARGUMENT;
  if (!writable(h)) return not_writable(h);
  h->activity = (h->activity & ~(rp::kActivityPhaseMask << rp::kActivityPhaseShift)) |
                (static_cast<uint64_t>(phase) << rp::kActivityPhaseShift);
  h->slot->activity.store(h->activity, kRelaxed);
  return TW_OK;
}

tw_status tw_set_pipeline_stage(tw_handle* h, int32_t stage) {
  if (!writable(h)) return not_writable(h);
  WriteSection w(h);
  h->slot->pipeline_stage.store(stage, kRelaxed);
  return TW_OK;
}

tw_status tw_add_oom_events(tw_handle* h, uint64_t count) {
  if (!writable(h)) return not_writable(h);
  WriteSection w(h);
  h->slot->gemini_oom_events.store(h->oom_events += count, kRelaxed);
  return TW_OK;
}

tw_status tw_set_kernels_compiled(tw_handle* h, int compiled) {
  if (!writable(h)) return not_writable(h);
  WriteSection w(h);
  h->slot->kernels_compiled.store(compiled ? 1 : 0, kRelaxed);
  return TW_OK;
}

}  // extern "C"
