// Reads one GPU's fields through NVML (nvml_api.h) into a GpuInfo. Each field is read by
// its own call; a call the library lacks or the GPU does not support leaves the field
// unknown. Every call names itself in `in_call` while it runs, so a hung one is reported by
// name (NvmlProbe::call_in_flight).
#pragma once

#include <atomic>

#include "agent/nvml.h"
#include "agent/nvml_api.h"

namespace trainwatch::agent {

// Calls NVML entry points, each named in `in_call` while it runs.
class NvmlCaller {
 public:
  explicit NvmlCaller(std::atomic<const char*>& in_call) : in_call_(in_call) {}

  // fn(args...) under `name`; kFunctionNotFound when the library has no such function.
  template <typename F, typename... Args>
  nvml::nvmlReturn_t operator()(const char* name, F* fn, Args... args) const {
    if (fn == nullptr) return nvml::kFunctionNotFound;
    in_call_.store(name, std::memory_order_relaxed);
    const nvml::nvmlReturn_t rc = fn(args...);
    in_call_.store(nullptr, std::memory_order_relaxed);
    return rc;
  }

 private:
  std::atomic<const char*>& in_call_;
};

// Everything but the XIDs (events, read for all GPUs at once) and the links' history.
void read_device(const nvml::Api& api, const NvmlCaller& call, nvml::nvmlDevice_t device, GpuInfo& g);

}  // namespace trainwatch::agent
