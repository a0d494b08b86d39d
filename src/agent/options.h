// What the agent watches and when it calls something unhealthy. Defaults follow the seed
// tutorials (stall after 10 minutes, GPU memory 95%).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/clock.h"

namespace trainwatch::agent {

struct DiskPath {
  std::string name;  // "checkpoint_dir", "nvme"
  std::string path;
};

struct Thresholds {
  Millis stall_after{600'000};                   // no step for this long while training
  double gpu_memory_pct = 95.0;                  // used/total at or above: OOM risk
  uint64_t disk_free_bytes = 10ull << 30;        // each watched path
  uint64_t host_memory_free_bytes = 1ull << 30;  // MemAvailable
  uint64_t overflow_streak = 50;                 // consecutive fp16 overflow steps
};

struct AgentOptions {
  std::string job = "default";
  std::string dir = "/dev/shm/trainwatch";
  std::string host = "127.0.0.1";
  uint16_t port = 8765;  // 0: any free port
  std::string proc_root = "/proc";
  std::string cgroup_root = "/sys/fs/cgroup";  // where the ranks' memory cgroups are read (oom_watch.h)
  std::string meminfo_path = "/proc/meminfo";
  std::string nvml_library = "libnvidia-ml.so.1";  // TRAINWATCH_NVML_LIBRARY overrides
  bool nvml = true;
  // Where sysfs is mounted: the InfiniBand/RoCE ports are under <sysfs_root>/class/infiniband
  // (fabric.h). TRAINWATCH_SYSFS_ROOT or --sysfs-root overrides, for a tree of a test's own.
  std::string sysfs_root = "/sys";
  bool rendezvous = true;  // probe MASTER_ADDR:MASTER_PORT from the slots
  // Native frames of an overdue rank (native_capture.h), by this tool, looked up on PATH
  // once at start; none when it is not found or native_stacks is off (--no-native-stacks).
  bool native_stacks = true;
  std::string native_tool = "eu-stack";
  std::vector<DiskPath> disks;
  Thresholds thresholds;
  Millis sample_interval{200};  // slots and procfs; /health serves the last sample
  // Between samples, how often (on average, at random instants) the agent looks at which
  // ranks are in a collective: one word a rank (rank_samples.h). 0: only at samples.
  Millis activity_interval{40};
  Millis probe_interval{5'000};  // NVML, disks, memory, rendezvous, fabric
  Millis probe_deadline{5'000};  // a probe in flight longer is reported as hung
  // Pushing node reports to `trainwatch serve` (report_pusher.h); off while server_url is empty.
  std::string server_url;  // --server / TRAINWATCH_SERVER
  std::string token;       // TRAINWATCH_TOKEN
  std::string node;        // TRAINWATCH_NODE; empty: the host name
  Millis report_every{5'000};
};

}  // namespace trainwatch::agent
