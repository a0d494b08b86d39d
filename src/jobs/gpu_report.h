// The GPUs, their ranks and the fabric as a node report carries them (docs/api.md, "Node
// reports"; the agent writes them in agent/gpu_report.cc). Every field past the first few
// is optional in schema 1: an older agent, or a driver without the function, sends none,
// and an absent field is unknown, never zero or healthy.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace trainwatch::jobs {

// Bounds of one GPU's lists and of the node's ports. Longer lists answer 400 naming them.
inline constexpr size_t kMaxXidsPerGpu = 16;
inline constexpr size_t kMaxClockReasons = 16;
inline constexpr size_t kMaxLinksDown = 64;
inline constexpr size_t kMaxIbPortsPerReport = 64;

struct XidReport {
  int code = 0;
  int64_t age_ms = 0;  // since the agent read it
};

struct RowRemapReport {
  uint64_t correctable = 0, uncorrectable = 0;
  bool pending = false, failure = false;
};

struct RetiredPagesReport {
  uint64_t single_bit = 0, double_bit = 0;
  bool pending = false;
};

struct PcieReport {
  std::optional<uint64_t> replays;
  std::optional<int> gen, max_gen, width, max_width;
};

// What the server needs of a GPU's NVLinks: how many, how many active, which went down
// after the agent saw them up, their errors summed.
struct NvlinkSummary {
  int count = 0, active = 0;
  std::vector<int> down;
  uint64_t errors = 0;
};

struct GpuReport {
  int index = 0;
  std::string name, uuid, pci_bus_id;  // uuid, pci_bus_id: "" when not known
  bool lost = false;
  uint64_t memory_used = 0, memory_total = 0;
  int64_t ecc_uncorrected = -1;    // -1: not supported
  int last_xid = 0;                // 0: none seen
  bool last_xid_critical = false;  // false for XIDs that are usually the application's own fault
  uint64_t xid_count = 0;
  std::vector<XidReport> xids;  // the latest, oldest first; empty from older agents
  std::optional<int> temperature_c, slowdown_temperature_c;
  std::optional<std::vector<std::string>> clock_event_reasons;  // core/gpu_terms.h words
  std::optional<RowRemapReport> row_remap;
  std::optional<RetiredPagesReport> retired_pages;
  PcieReport pcie;
  std::string recovery_action;  // core/gpu_terms.h word; "" when not supported
  std::optional<NvlinkSummary> nvlinks;
  double memory_pct() const {
    return memory_total ? 100.0 * static_cast<double>(memory_used) / static_cast<double>(memory_total) : 0;
  }
};

struct IbPortReport {
  std::string device;
  int port = 1;
  std::string state, phys_state, link_layer;
  std::optional<double> rate_gbps;
  bool was_active = false;  // its agent saw it ACTIVE
  int64_t link_downed = -1, symbol_errors = -1;
  int64_t link_downed_rise = 0, symbol_error_rise = 0;  // over the agent's window
  bool active() const { return state == "ACTIVE"; }
  std::string name() const { return device + "/" + std::to_string(port); }
};

// The GPU a rank uses, as its agent found it (agent/gpu_ranks.h).
struct RankGpuReport {
  int index = 0;
  std::optional<uint64_t> memory_used;
  std::string source;  // "nvml", "cuda_visible_devices" or "local_rank"
};

}  // namespace trainwatch::jobs
