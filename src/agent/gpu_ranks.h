// Which GPU each local rank uses. First NVML's list of compute processes, matched to the
// ranks' pids (a rank found on several GPUs uses the one where it holds the most memory:
// a stray context on GPU 0 is common); else what the rank's environment says: its
// LOCAL_RANK-th device of CUDA_VISIBLE_DEVICES (read from /proc/<pid>/environ), or the
// LOCAL_RANK-th GPU when that is unset. A rank keeps its GPU once its process ends, so a
// fault found after its death still names it.
//
// Threading: used by the sampler thread only.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/node_snapshot.h"

namespace trainwatch::agent {

// The GPU a rank's environment points at: the LOCAL_RANK-th entry of CUDA_VISIBLE_DEVICES
// (the only one when it names one), an index or a UUID (or a prefix of one, as CUDA takes
// it); the LOCAL_RANK-th GPU when the variable is unset. nullopt when it names no GPU here
// (empty, -1, a MIG device, an index or UUID NVML does not list). Pure.
std::optional<unsigned> gpu_from_environment(int local_rank,
                                             const std::optional<std::string>& cuda_visible_devices,
                                             const std::vector<GpuInfo>& gpus);

class GpuRanks {
 public:
  explicit GpuRanks(std::string proc_root) : proc_root_(std::move(proc_root)) {}

  // Sets RankView::gpu of every rank of `node` from its GPUs (none when NVML has no GPUs).
  void assign(NodeSnapshot& node);

 private:
  std::optional<RankGpu> from_environment(const RankView& r, const std::vector<GpuInfo>& gpus);

  std::string proc_root_;
  // By slot owner (one process's claim of a slot): its GPU as last found, and its
  // CUDA_VISIBLE_DEVICES, read once. Entries of ranks no longer seen are dropped.
  std::map<uint64_t, RankGpu> kept_;
  std::map<uint64_t, std::optional<std::string>> visible_devices_;
};

}  // namespace trainwatch::agent
