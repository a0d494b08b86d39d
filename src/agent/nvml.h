// GPUs through NVML, loaded with dlopen (the agent does not link the driver library, so it
// runs on nodes without GPUs). No library or no GPU is a state, not an error; a function
// the driver lacks or a GPU does not support leaves its field unknown (nullopt, -1, an
// empty list), never an error. Declarations after nvml.h: agent/nvml_api.h.
//
// Threading: one NvmlProbe is used by one thread (its ProbeWorker), whose deadline bounds
// every call: a call that hangs is reported by name (call_in_flight) while the sampler and
// /health go on. call_in_flight() may be read from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/clock.h"

namespace trainwatch::agent {

namespace nvml {
struct Api;
}

struct RowRemapInfo {
  unsigned correctable = 0, uncorrectable = 0;  // rows remapped for each kind of error
  bool pending = false;                         // remappings wait for a GPU reset
  bool failure = false;                         // a remapping has failed: the GPU needs service
};

struct RetiredPagesInfo {
  unsigned single_bit = 0, double_bit = 0;  // pages retired for each cause
  bool pending = false;                     // pages wait for a reboot to be retired
};

struct PcieInfo {
  int64_t replays = -1;  // the link's replay counter; -1: not supported
  int gen = -1, max_gen = -1, width = -1, max_width = -1;
};

struct NvlinkInfo {
  unsigned link = 0;
  bool active = false;
  bool was_active = false;  // seen active by this agent before: a link down now is news
  int64_t replay = -1, recovery = -1, crc_flit = -1, crc_data = -1;  // -1: not supported
};

struct GpuProcess {
  uint32_t pid = 0;
  int64_t used_bytes = -1;  // -1: NVML could not say (NVML_VALUE_NOT_AVAILABLE)
};

struct XidEvent {
  unsigned code = 0;
  int64_t at_ms = 0;  // wall time the agent read it
};

// At most this many of a GPU's latest XIDs are kept; their count goes on.
inline constexpr size_t kMaxRecentXids = 8;
// Processes per GPU read from NVML; more are left out (a training GPU runs one or two).
inline constexpr unsigned kMaxGpuProcesses = 64;

struct GpuInfo {
  unsigned index = 0;
  std::string name;
  std::string uuid;        // "GPU-…"; "" when not supported
  std::string pci_bus_id;  // "00000000:8A:00.0"; "" when not supported
  bool lost = false;       // NVML_ERROR_GPU_IS_LOST
  uint64_t memory_used = 0, memory_total = 0;
  int utilization_pct = -1;  // -1: not supported
  int temperature_c = -1;
  int slowdown_temperature_c = -1;  // where the GPU starts slowing itself
  double power_w = -1;
  int sm_clock_mhz = -1, memory_clock_mhz = -1;
  int64_t ecc_uncorrected = -1;
  std::optional<uint64_t> clock_event_reasons;  // nvmlClocksEventReason* bits (core/gpu_terms.h)
  std::optional<RowRemapInfo> row_remap;        // Ampere and newer
  std::optional<RetiredPagesInfo> retired_pages;
  PcieInfo pcie;
  std::optional<int> recovery_action;                // NVML field 230 (driver >= 570); core/gpu_terms.h
  std::vector<NvlinkInfo> nvlinks;                   // empty: no NVLink, or not supported
  std::optional<std::vector<GpuProcess>> processes;  // nullopt: the list could not be read
  unsigned last_xid = 0;                             // 0: none seen since the agent started
  uint64_t xid_count = 0;
  std::vector<XidEvent> recent_xids;  // oldest first, at most kMaxRecentXids
  double memory_pct() const {
    return memory_total ? 100.0 * static_cast<double>(memory_used) / static_cast<double>(memory_total) : 0;
  }
};

struct NvmlInfo {
  bool library_loaded = false;
  std::string library_error;  // why not (dlopen's text), or why init failed
  std::vector<GpuInfo> gpus;
};

class NvmlProbe {
 public:
  NvmlProbe(std::string library_path, const Clock& clock) : path_(std::move(library_path)), clock_(clock) {}
  ~NvmlProbe();
  NvmlProbe(const NvmlProbe&) = delete;
  NvmlProbe& operator=(const NvmlProbe&) = delete;

  NvmlInfo probe();

  // The NVML function the probe is in now ("nvmlDeviceGetRemappedRows"); null between calls.
  const char* call_in_flight() const { return in_call_.load(std::memory_order_relaxed); }

 private:
  bool load(std::string* error);
  void register_xid_events(unsigned count);
  void drain_events(const std::vector<void*>& devices);
  void remember_links(GpuInfo& g);

  std::string path_;
  const Clock& clock_;
  void* lib_ = nullptr;
  nvml::Api* api_ = nullptr;
  void* event_set_ = nullptr;
  bool loaded_ = false;
  std::string load_error_;
  std::atomic<const char*> in_call_{nullptr};
  struct XidHistory {
    uint64_t count = 0;
    std::deque<XidEvent> recent;  // at most kMaxRecentXids
  };
  std::map<unsigned, XidHistory> xids_;                // by GPU index
  std::map<unsigned, std::set<unsigned>> links_seen_;  // by GPU index: links seen active
};

}  // namespace trainwatch::agent
