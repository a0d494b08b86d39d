// The node's InfiniBand and RoCE ports, from sysfs: <sysfs_root>/class/infiniband/<device>/
// ports/<n>/{state,phys_state,rate,link_layer,counters/*}. The root is a setting (the
// agent's --sysfs-root) so tests point it at a tree of their own. No such directory is a
// node without RDMA, not an error; a counter the driver does not expose reads -1.
//
// A counter's rise is over the last kFabricWindow, from the samples this watch has taken:
// a port that went down and came back within a report interval still shows as a rise of
// link_downed. Threading: one FabricWatch is used by one thread (its ProbeWorker).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/clock.h"

namespace trainwatch::agent {

inline constexpr Millis kFabricWindow{600'000};  // a rise of link_downed is news for 10 minutes
inline constexpr size_t kMaxIbPorts = 64;        // ports read; more are left out (a node has 1-16)

struct IbPortInfo {
  std::string device;  // "mlx5_0"
  unsigned port = 1;
  std::string state;       // "ACTIVE", "DOWN", "INIT", "ARMED", "ACTIVE_DEFER" ("" unreadable)
  std::string phys_state;  // "LinkUp", "Polling", "Disabled", ...
  std::string link_layer;  // "InfiniBand", or "Ethernet" for RoCE
  double rate_gbps = -1;   // the link's signalling rate, "200 Gb/sec (4X HDR)" -> 200
  int64_t link_downed = -1, symbol_errors = -1, link_error_recovery = -1, rcv_errors = -1;
  int64_t link_downed_rise = 0, symbol_error_rise = 0;  // over the last kFabricWindow
  bool was_active = false;  // seen ACTIVE by this agent: a port down now that was up is news
  bool active() const { return state == "ACTIVE"; }
  std::string name() const { return device + "/" + std::to_string(port); }
};

struct FabricInfo {
  std::vector<IbPortInfo> ports;  // by device, then port
};

// Reads every port under <sysfs_root>/class/infiniband as it is now (no rises). Sorted.
std::vector<IbPortInfo> read_ib_ports(const std::string& sysfs_root);

class FabricWatch {
 public:
  FabricWatch(std::string sysfs_root, const Clock& clock, Millis window = kFabricWindow)
      : root_(std::move(sysfs_root)), clock_(clock), window_(window) {}

  FabricInfo probe();

 private:
  struct Sample {
    MonoTime at;
    int64_t value;
  };
  // The rise of one counter over the window, after adding its value now.
  int64_t rise(std::deque<Sample>& history, MonoTime now, int64_t value) const;

  std::string root_;
  const Clock& clock_;
  Millis window_;
  std::map<std::string, std::deque<Sample>> link_downed_, symbol_errors_;  // by port name
  std::set<std::string> seen_active_;
};

}  // namespace trainwatch::agent
