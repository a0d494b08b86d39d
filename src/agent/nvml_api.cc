#include "agent/nvml_api.h"

#include <dlfcn.h>

#include <initializer_list>

namespace trainwatch::agent::nvml {
namespace {

// The first of `names` the library exports, newest version first; null when none.
void* first_symbol(void* lib, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (void* p = ::dlsym(lib, name)) return p;
  }
  return nullptr;
}

// Casting dlsym's void* to a function pointer is how POSIX does it.
template <typename F>
void bind(void* lib, F& field, std::initializer_list<const char*> names) {
  field = reinterpret_cast<F>(first_symbol(lib, names));  // NOLINT(bugprone-casting-through-void)
}

}  // namespace

bool resolve(void* lib, Api& api, std::string* error) {
  bind(lib, api.init, {"nvmlInit_v2", "nvmlInit"});
  bind(lib, api.shutdown, {"nvmlShutdown"});
  bind(lib, api.count, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"});
  bind(lib, api.handle, {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"});
  bind(lib, api.name, {"nvmlDeviceGetName"});
  bind(lib, api.uuid, {"nvmlDeviceGetUUID"});
  // Only _v3: the unversioned name fills an older nvmlPciInfo_t whose busId is 16 bytes.
  bind(lib, api.pci_info, {"nvmlDeviceGetPciInfo_v3"});
  bind(lib, api.memory, {"nvmlDeviceGetMemoryInfo"});
  bind(lib, api.utilization, {"nvmlDeviceGetUtilizationRates"});
  bind(lib, api.temperature, {"nvmlDeviceGetTemperature"});
  bind(lib, api.temperature_threshold, {"nvmlDeviceGetTemperatureThreshold"});
  bind(lib, api.power, {"nvmlDeviceGetPowerUsage"});
  bind(lib, api.clock, {"nvmlDeviceGetClockInfo"});
  bind(lib, api.ecc, {"nvmlDeviceGetTotalEccErrors"});
  // Renamed in driver 535; the old name stays exported (deprecated) with the same bits.
  bind(lib, api.clock_events,
       {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"});
  bind(lib, api.remapped_rows, {"nvmlDeviceGetRemappedRows"});
  bind(lib, api.retired_pages, {"nvmlDeviceGetRetiredPages"});
  bind(lib, api.retired_pending, {"nvmlDeviceGetRetiredPagesPendingStatus"});
  bind(lib, api.nvlink_state, {"nvmlDeviceGetNvLinkState"});
  bind(lib, api.nvlink_errors, {"nvmlDeviceGetNvLinkErrorCounter"});
  bind(lib, api.pcie_replays, {"nvmlDeviceGetPcieReplayCounter"});
  bind(lib, api.pcie_gen, {"nvmlDeviceGetCurrPcieLinkGeneration"});
  bind(lib, api.pcie_max_gen, {"nvmlDeviceGetMaxPcieLinkGeneration"});
  bind(lib, api.pcie_width, {"nvmlDeviceGetCurrPcieLinkWidth"});
  bind(lib, api.pcie_max_width, {"nvmlDeviceGetMaxPcieLinkWidth"});
  bind(lib, api.field_values, {"nvmlDeviceGetFieldValues"});
  bind(lib, api.processes,
       {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"});
  if (!api.processes) bind(lib, api.processes_v1, {"nvmlDeviceGetComputeRunningProcesses"});
  bind(lib, api.event_set_create, {"nvmlEventSetCreate"});
  bind(lib, api.event_set_free, {"nvmlEventSetFree"});
  bind(lib, api.register_events, {"nvmlDeviceRegisterEvents"});
  bind(lib, api.event_wait, {"nvmlEventSetWait_v2", "nvmlEventSetWait"});
  if (!api.init || !api.count || !api.handle) {
    *error = "the library lacks nvmlInit/nvmlDeviceGetCount/nvmlDeviceGetHandleByIndex";
    return false;
  }
  return true;
}

}  // namespace trainwatch::agent::nvml
