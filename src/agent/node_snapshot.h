// Everything the agent knows about its node at one instant: the ranks' slots with their
// process state, and the probes' last results. Built by the sampler, rendered by health.h.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/fabric.h"
#include "agent/nvml.h"
#include "agent/probes.h"
#include "agent/wait_point.h"
#include "core/clock.h"
#include "core/native_stack.h"
#include "core/process_exit.h"
#include "core/python_stack.h"
#include "reporter/slot_reader.h"

namespace trainwatch::agent {

// The GPU a rank uses (gpu_ranks.h) and the memory it holds there.
struct RankGpu {
  unsigned index = 0;
  int64_t memory_used = -1;  // bytes; -1: unknown
  std::string source;        // "nvml" (its pid in NVML's list), "cuda_visible_devices" or "local_rank"
};

struct RankView {
  reporter::SlotSnapshot slot;
  bool alive = false;
  char state = '?';          // /proc/<pid>/stat state letter; '?' when gone
  int64_t last_step_ms = 0;  // wall time the agent first saw the current step (0: none yet)
  // Wall time the agent first saw the rank's latest run of non-finite losses (0: none, or a
  // library too old to keep them): the step path reads no clock, so, as for steps, the
  // agent's first sight (within one sample) is the run's time.
  int64_t nonfinite_first_ms = 0;
  double steps_per_s = 0;
  // The process's user + system CPU time, clock ticks; when the agent lives in this very
  // process, less its own threads' (own_threads.h): the agent's work is not the rank's.
  uint64_t cpu_ticks = 0;
  uint64_t rss_bytes = 0;  // resident memory at the last sample that saw it alive
  // Sampled time in a collective and time sampled, since the agent first saw the rank mark
  // one (rank_samples.h); both 0 for a rank that marks none.
  int64_t collective_wait_ms = 0, collective_sampled_ms = 0;
  WaitPoint wait;  // where its main thread waits (empty when not readable)
  // Its Python stack, asked for when its step became overdue (stack_capture.h); null when
  // none was asked for at this step or none came (stack_note says why).
  std::shared_ptr<const PyStack> stack;
  int64_t stack_ms = 0;  // wall time of the capture
  std::string stack_note;
  // Its native frames, taken right after the Python stack (native_capture.h); null when
  // none was asked for or none came (native_note says why, when it was asked for).
  std::shared_ptr<const NativeStack> native;
  std::string native_note;
  // The stacks of its children that keep a stack file (DataLoader workers), taken with its
  // own (child_stacks.h); null when none came.
  std::shared_ptr<const std::vector<ChildPyStack>> children;
  std::optional<ProcessExit> exit;  // once gone, how it ended, when the kernel told (exit_watch.h)
  std::optional<RankGpu> gpu;       // none when no GPU here is known to be its
};

template <typename T>
struct ProbeView {
  std::optional<T> value;
  bool hung = false;
  Millis in_flight_for{0};
};

struct NodeSnapshot {
  std::string job;
  std::string slot_error;  // why the slot file could not be read ("" when fine)
  // Slot files that exist but are not whole (shrunk, wrong size, another layout): the ranks
  // writing them cannot be seen. One sentence each, naming the file.
  std::vector<std::string> malformed_slots;
  // User directories under the slot directory that fail the ownership checks (slot_dir.h).
  std::vector<std::string> refused_slot_dirs;
  // Slots that break their invariants (reporter/slot_check.h): never ranks. One sentence
  // each, naming the file and the slot number.
  std::vector<std::string> invalid_slots;
  std::vector<RankView> ranks;  // ordered by global rank
  ProbeView<NvmlInfo> nvml;
  bool nvml_enabled = true;
  std::string nvml_call;  // while NVML hangs: the function it hangs in ("" when unknown)
  ProbeView<std::vector<DiskInfo>> disks;
  ProbeView<MemoryInfo> memory;
  ProbeView<RendezvousInfo> rendezvous;
  ProbeView<FabricInfo> fabric;  // InfiniBand/RoCE ports (fabric.h)
  int64_t now_ms = 0;
  Millis probe_deadline{5'000};
};

}  // namespace trainwatch::agent
