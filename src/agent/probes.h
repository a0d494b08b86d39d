// Node probes: host memory (/proc/meminfo), free space on paths (statvfs), the rendezvous
// port (TCP connect with a timeout). Each returns a value; none throws. NVML is in nvml.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agent/options.h"
#include "core/clock.h"

namespace trainwatch::agent {

struct MemoryInfo {
  bool ok = false;
  std::string error;
  uint64_t total_bytes = 0;
  uint64_t available_bytes = 0;
};
MemoryInfo probe_memory(const std::string& meminfo_path);

struct DiskInfo {
  std::string name, path;
  bool ok = false;
  std::string error;
  uint64_t total_bytes = 0;
  uint64_t free_bytes = 0;  // available to unprivileged users (f_bavail)
};
std::vector<DiskInfo> probe_disks(const std::vector<DiskPath>& paths);

struct RendezvousInfo {
  bool checked = false;  // false when no rank reported MASTER_ADDR/MASTER_PORT
  std::string host;
  int port = 0;
  bool listening = false;
  std::string error;
};
RendezvousInfo probe_rendezvous(const std::string& host, int port, Millis timeout);

}  // namespace trainwatch::agent
