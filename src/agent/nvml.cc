// The few NVML declarations we need, written here (the NVML headers are not in Debian).
#include "agent/nvml.h"

#include <dlfcn.h>

namespace trainwatch::agent {
namespace {

// NOLINTBEGIN(readability-identifier-naming): NVML's own C types, named as nvml.h names them.
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
using nvmlEventSet_t = void*;
constexpr nvmlReturn_t kSuccess = 0;
constexpr nvmlReturn_t kGpuIsLost = 15;
constexpr unsigned long long kEventXidCritical = 0x8;

struct nvmlMemory_t {
  unsigned long long total, free, used;
};
struct nvmlUtilization_t {
  unsigned int gpu, memory;
};
struct nvmlEventData_t {
  nvmlDevice_t device;
  unsigned long long event_type;
  unsigned long long event_data;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};
// NOLINTEND(readability-identifier-naming)

}  // namespace

struct NvmlProbe::Api {
  nvmlReturn_t (*init)();
  nvmlReturn_t (*shutdown)();
  nvmlReturn_t (*count)(unsigned*);
  nvmlReturn_t (*handle)(unsigned, nvmlDevice_t*);
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned);
  nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t*);
  nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t*);
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned*);
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned*);
  nvmlReturn_t (*ecc)(nvmlDevice_t, int, int, unsigned long long*);
  nvmlReturn_t (*throttle)(nvmlDevice_t, unsigned long long*);
  nvmlReturn_t (*event_set_create)(nvmlEventSet_t*);
  nvmlReturn_t (*register_events)(nvmlDevice_t, unsigned long long, nvmlEventSet_t);
  nvmlReturn_t (*event_wait)(nvmlEventSet_t, nvmlEventData_t*, unsigned);
};

bool is_application_xid(unsigned xid) {
  return xid == 13 || xid == 31 || xid == 43 || xid == 45 || xid == 68 || xid == 109;
}

NvmlProbe::~NvmlProbe() {
  if (api_ && api_->shutdown) api_->shutdown();
  delete api_;
  if (lib_) ::dlclose(lib_);
}

bool NvmlProbe::load(std::string* error) {
  lib_ = ::dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib_) {
    const char* why = ::dlerror();
    *error = why ? why : ("cannot load " + path_);
    return false;
  }
  api_ = new Api{};
  auto sym = [&](const char* name, const char* fallback = nullptr) {
    void* p = ::dlsym(lib_, name);
    if (!p && fallback) p = ::dlsym(lib_, fallback);
    return p;
  };
  // Casting void* from dlsym to a function pointer is how POSIX does it.
#define TW_NVML_SYM(field, ...) api_->field = reinterpret_cast<decltype(api_->field)>(sym(__VA_ARGS__))
  TW_NVML_SYM(init, "nvmlInit_v2", "nvmlInit");
  TW_NVML_SYM(shutdown, "nvmlShutdown");
  TW_NVML_SYM(count, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
  TW_NVML_SYM(handle, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
  TW_NVML_SYM(name, "nvmlDeviceGetName");
  TW_NVML_SYM(memory, "nvmlDeviceGetMemoryInfo");
  TW_NVML_SYM(utilization, "nvmlDeviceGetUtilizationRates");
  TW_NVML_SYM(temperature, "nvmlDeviceGetTemperature");
  TW_NVML_SYM(power, "nvmlDeviceGetPowerUsage");
  TW_NVML_SYM(ecc, "nvmlDeviceGetTotalEccErrors");
  TW_NVML_SYM(throttle, "nvmlDeviceGetCurrentClocksThrottleReasons");
  TW_NVML_SYM(event_set_create, "nvmlEventSetCreate");
  TW_NVML_SYM(register_events, "nvmlDeviceRegisterEvents");
  TW_NVML_SYM(event_wait, "nvmlEventSetWait_v2", "nvmlEventSetWait");
#undef TW_NVML_SYM
  if (!api_->init || !api_->count || !api_->handle) {
    *error = path_ + " lacks nvmlInit/nvmlDeviceGetCount/nvmlDeviceGetHandleByIndex";
    return false;
  }
  if (int rc = api_->init(); rc != kSuccess) {
    *error = "nvmlInit failed with NVML error " + std::to_string(rc);
    return false;
  }
  if (api_->event_set_create && api_->register_events && api_->event_wait) {
    if (api_->event_set_create(&event_set_) != kSuccess) event_set_ = nullptr;
    unsigned n = 0;
    if (event_set_ && api_->count(&n) == kSuccess) {
      for (unsigned i = 0; i < n; ++i) {
        nvmlDevice_t dev = nullptr;
        if (api_->handle(i, &dev) == kSuccess) api_->register_events(dev, kEventXidCritical, event_set_);
      }
    }
  }
  return true;
}

NvmlInfo NvmlProbe::probe() {
  NvmlInfo info;
  if (!loaded_ && load_error_.empty()) {
    loaded_ = load(&load_error_);
  }
  info.library_loaded = loaded_;
  info.library_error = load_error_;
  if (!loaded_) return info;

  unsigned n = 0;
  if (api_->count(&n) != kSuccess) return info;
  std::vector<nvmlDevice_t> devices(n, nullptr);
  for (unsigned i = 0; i < n; ++i) {
    GpuInfo g;
    g.index = i;
    if (int rc = api_->handle(i, &devices[i]); rc != kSuccess) {
      g.lost = rc == kGpuIsLost;
      info.gpus.push_back(g);
      continue;
    }
    nvmlDevice_t d = devices[i];
    char name[96] = {};
    if (api_->name && api_->name(d, name, sizeof name) == kSuccess) g.name = name;
    nvmlMemory_t mem{};
    if (api_->memory) {
      int rc = api_->memory(d, &mem);
      if (rc == kSuccess) {
        g.memory_used = mem.used;
        g.memory_total = mem.total;
      } else if (rc == kGpuIsLost) {
        g.lost = true;
      }
    }
    nvmlUtilization_t util{};
    if (api_->utilization && api_->utilization(d, &util) == kSuccess)
      g.utilization_pct = static_cast<int>(util.gpu);
    unsigned temp = 0;
    if (api_->temperature && api_->temperature(d, 0, &temp) == kSuccess)
      g.temperature_c = static_cast<int>(temp);
    unsigned mw = 0;
    if (api_->power && api_->power(d, &mw) == kSuccess) g.power_w = mw / 1000.0;
    unsigned long long ecc = 0;
    if (api_->ecc && api_->ecc(d, 1 /*uncorrected*/, 0 /*volatile*/, &ecc) == kSuccess) {
      g.ecc_uncorrected = static_cast<int64_t>(ecc);
    }
    unsigned long long reasons = 0;
    if (api_->throttle && api_->throttle(d, &reasons) == kSuccess) g.throttle_reasons = reasons;
    info.gpus.push_back(g);
  }
  // Drain the XID events that arrived since the last probe (bounded per probe).
  if (event_set_) {
    for (int i = 0; i < 256; ++i) {
      nvmlEventData_t ev{};
      if (api_->event_wait(event_set_, &ev, 0) != kSuccess) break;
      for (unsigned k = 0; k < n; ++k) {
        if (devices[k] == ev.device) {
          auto& x = xids_[k];
          x.first = static_cast<unsigned>(ev.event_data);
          x.second++;
        }
      }
    }
  }
  for (auto& g : info.gpus) {
    if (auto it = xids_.find(g.index); it != xids_.end()) {
      g.last_xid = it->second.first;
      g.xid_count = it->second.second;
    }
  }
  return info;
}

}  // namespace trainwatch::agent
