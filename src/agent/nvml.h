// GPUs through NVML, loaded with dlopen (the agent does not link the driver library, so it
// runs on nodes without GPUs). No library or no GPU is a state, not an error.
// Threading: one NvmlProbe is used by one thread (its ProbeWorker); calls may block.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace trainwatch::agent {

struct GpuInfo {
  unsigned index = 0;
  std::string name;
  bool lost = false;  // NVML_ERROR_GPU_IS_LOST
  uint64_t memory_used = 0, memory_total = 0;
  int utilization_pct = -1;  // -1: not supported
  int temperature_c = -1;
  double power_w = -1;
  int64_t ecc_uncorrected = -1;
  uint64_t throttle_reasons = 0;
  unsigned last_xid = 0;  // 0: none seen since the agent started
  uint64_t xid_count = 0;
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
  explicit NvmlProbe(std::string library_path) : path_(std::move(library_path)) {}
  ~NvmlProbe();
  NvmlProbe(const NvmlProbe&) = delete;
  NvmlProbe& operator=(const NvmlProbe&) = delete;

  NvmlInfo probe();

 private:
  struct Api;
  bool load(std::string* error);

  std::string path_;
  void* lib_ = nullptr;
  Api* api_ = nullptr;
  void* event_set_ = nullptr;
  bool loaded_ = false;
  std::string load_error_;
  std::map<unsigned, std::pair<unsigned, uint64_t>> xids_;  // gpu -> (last xid, count)
};

// XIDs that are usually the application's own fault (docs/failure-modes.md): reported, not paged.
bool is_application_xid(unsigned xid);

}  // namespace trainwatch::agent
