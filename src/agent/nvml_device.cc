#include "agent/nvml_device.h"

#include <cstring>
#include <vector>

namespace trainwatch::agent {
namespace {

using nvml::kGpuIsLost;
using nvml::kInsufficientSize;
using nvml::kSuccess;
using nvml::nvmlDevice_t;

int as_int(unsigned v) { return static_cast<int>(v); }

void read_identity(const nvml::Api& api, const NvmlCaller& call, nvmlDevice_t d, GpuInfo& g) {
  char text[nvml::kNameBufferSize] = {};
  if (call("nvmlDeviceGetName", api.name, d, text, static_cast<unsigned>(sizeof text)) == kSuccess)
    g.name = text;
  char uuid[nvml::kUuidBufferSize] = {};
  if (call("nvmlDeviceGetUUID", api.uuid, d, uuid, static_cast<unsigned>(sizeof uuid)) == kSuccess)
    g.uuid = uuid;
  nvml::nvmlPciInfo_t pci{};
  if (call("nvmlDeviceGetPciInfo_v3", api.pci_info, d, &pci) == kSuccess) {
    pci.busId[sizeof pci.busId - 1] = '\0';
    g.pci_bus_id = pci.busId;
  }
}

void read_sensors(const nvml::Api& api, const NvmlCaller& call, nvmlDevice_t d, GpuInfo& g) {
  nvml::nvmlMemory_t mem{};
  const int rc = call("nvmlDeviceGetMemoryInfo", api.memory, d, &mem);
  if (rc == kSuccess) {
    g.memory_used = mem.used;
    g.memory_total = mem.total;
  } else if (rc == kGpuIsLost) {
    g.lost = true;
  }
  nvml::nvmlUtilization_t util{};
  if (call("nvmlDeviceGetUtilizationRates", api.utilization, d, &util) == kSuccess)
    g.utilization_pct = as_int(util.gpu);
  unsigned v = 0;
  if (call("nvmlDeviceGetTemperature", api.temperature, d, nvml::kTemperatureGpu, &v) == kSuccess)
    g.temperature_c = as_int(v);
  if (call("nvmlDeviceGetTemperatureThreshold", api.temperature_threshold, d,
           nvml::kTemperatureThresholdSlowdown, &v) == kSuccess)
    g.slowdown_temperature_c = as_int(v);
  if (call("nvmlDeviceGetPowerUsage", api.power, d, &v) == kSuccess) g.power_w = v / 1000.0;
  if (call("nvmlDeviceGetClockInfo", api.clock, d, nvml::kClockSm, &v) == kSuccess)
    g.sm_clock_mhz = as_int(v);
  if (call("nvmlDeviceGetClockInfo", api.clock, d, nvml::kClockMem, &v) == kSuccess)
    g.memory_clock_mhz = as_int(v);
  unsigned long long reasons = 0;
  if (call("nvmlDeviceGetCurrentClocksEventReasons", api.clock_events, d, &reasons) == kSuccess)
    g.clock_event_reasons = reasons;
}

// The number of pages retired for `cause`: NVML fills what fits in the buffer and sets the
// count to all of them, answering INSUFFICIENT_SIZE when they did not fit.
std::optional<unsigned> retired_count(const nvml::Api& api, const NvmlCaller& call, nvmlDevice_t d,
                                      int cause) {
  unsigned long long addresses[16];
  unsigned count = 16;
  const int rc = call("nvmlDeviceGetRetiredPages", api.retired_pages, d, cause, &count, addresses);
  if (rc != kSuccess && rc != kInsufficientSize) return std::nullopt;
  return count;
}

void read_memory_health(const nvml::Api& api, const NvmlCaller& call, nvmlDevice_t d, GpuInfo& g) {
  unsigned long long ecc = 0;
  if (call("nvmlDeviceGetTotalEccErrors", api.ecc, d, nvml::kMemoryErrorUncorrected, nvml::kVolatileEcc,
           &ecc) == kSuccess)
    g.ecc_uncorrected = static_cast<int64_t>(ecc);
  unsigned corr = 0, unc = 0, pending = 0, failure = 0;
  if (call("nvmlDeviceGetRemappedRows", api.remapped_rows, d, &corr, &unc, &pending, &failure) == kSuccess)
    g.row_remap = RowRemapInfo{corr, unc, pending != 0, failure != 0};
  const auto sbe = retired_count(api, call, d, nvml::kRetiredMultipleSingleBit);
  const auto dbe = retired_count(api, call, d, nvml::kRetiredDoubleBit);
  nvml::nvmlEnableState_t retire_pending = 0;
  const bool pending_known =
      call("nvmlDeviceGetRetiredPagesPendingStatus", api.retired_pending, d, &retire_pending) == kSuccess;
  if (sbe || dbe || pending_known)
    g.retired_pages = RetiredPagesInfo{sbe.value_or(0), dbe.value_or(0), retire_pending != 0};
}

void read_pcie(const nvml::Api& api, const NvmlCaller& call, nvmlDevice_t d, GpuInfo& g) {
  unsigned v = 0;
  if (call("nvmlDeviceGetPcieReplayCounter", api.pcie_replays, d, &v) == kSuccess) g.pcie.replays = v;
  if (call("nvmlDeviceGetCurrPcieLinkGeneration", api.pcie_gen, d, &v) == kSuccess) g.pcie.gen = as_int(v);
  if (call("nvmlDeviceGetMaxPcieLinkGeneration", api.pcie_max_gen, d, &v) == kSuccess)
    g.pcie.max_gen = as_int(v);
  if (call("nvmlDeviceGetCurrPcieLinkWidth", api.pcie_width, d, &v) == kSuccess) g.pcie.width = as_int(v);
  if (call("nvmlDeviceGetMaxPcieLinkWidth", api.pcie_max_width, d, &v) == kSuccess)
    g.pcie.max_width = as_int(v);
}

std::optional<int64_t> field_integer(const nvml::nvmlFieldValue_t& f) {
  if (f.nvmlReturn != kSuccess) return std::nullopt;
  switch (f.valueType) {
    case nvml::kValueUnsignedInt: return f.value.uiVal;
    case nvml::kValueUnsignedLong: return static_cast<int64_t>(f.value.ulVal);
    case nvml::kValueUnsignedLongLong: return static_cast<int64_t>(f.value.ullVal);
    case nvml::kValueSignedLongLong: return f.value.sllVal;
    case nvml::kValueSignedInt: return f.value.siVal;
    case nvml::kValueUnsignedShort: return f.value.usVal;
    default: return std::nullopt;
  }
}

void read_recovery_action(const nvml::Api& api, const NvmlCaller& call, nvmlDevice_t d, GpuInfo& g) {
  nvml::nvmlFieldValue_t field{};
  field.fieldId = nvml::kFieldGpuRecoveryAction;
  if (call("nvmlDeviceGetFieldValues", api.field_values, d, 1, &field) != kSuccess) return;
  if (auto v = field_integer(field)) g.recovery_action = static_cast<int>(*v);
}

int64_t link_counter(const nvml::Api& api, const NvmlCaller& call, nvmlDevice_t d, unsigned link,
                     int counter) {
  unsigned long long v = 0;
  if (call("nvmlDeviceGetNvLinkErrorCounter", api.nvlink_errors, d, link, counter, &v) != kSuccess) return -1;
  return static_cast<int64_t>(v);
}

// Links 0.. until NVML says the link does not exist; a GPU whose link 0 is not supported
// has no NVLink (a PCIe card), and its other links are not asked for.
void read_nvlinks(const nvml::Api& api, const NvmlCaller& call, nvmlDevice_t d, GpuInfo& g) {
  for (unsigned link = 0; link < nvml::kNvlinkMaxLinks; ++link) {
    nvml::nvmlEnableState_t active = 0;
    const int rc = call("nvmlDeviceGetNvLinkState", api.nvlink_state, d, link, &active);
    if (rc == nvml::kInvalidArgument || rc == nvml::kFunctionNotFound) break;
    if (rc != kSuccess) {
      if (link == 0) break;
      continue;
    }
    NvlinkInfo l;
    l.link = link;
    l.active = active != 0;
    l.replay = link_counter(api, call, d, link, nvml::kNvlinkErrorReplay);
    l.recovery = link_counter(api, call, d, link, nvml::kNvlinkErrorRecovery);
    l.crc_flit = link_counter(api, call, d, link, nvml::kNvlinkErrorCrcFlit);
    l.crc_data = link_counter(api, call, d, link, nvml::kNvlinkErrorCrcData);
    g.nvlinks.push_back(l);
  }
}

int64_t used_bytes(unsigned long long v) {
  return v == nvml::kValueNotAvailable ? -1 : static_cast<int64_t>(v);
}

// The compute processes, through whichever version the library has. A list longer than
// kMaxGpuProcesses answers INSUFFICIENT_SIZE: the first kMaxGpuProcesses are not filled
// then, so the GPU's list reads as unknown rather than as a wrong one.
void read_processes(const nvml::Api& api, const NvmlCaller& call, nvmlDevice_t d, GpuInfo& g) {
  unsigned count = kMaxGpuProcesses;
  std::vector<GpuProcess> out;
  if (api.processes) {
    nvml::nvmlProcessInfo_t infos[kMaxGpuProcesses];
    if (call("nvmlDeviceGetComputeRunningProcesses_v3", api.processes, d, &count, infos) != kSuccess) return;
    for (unsigned i = 0; i < count && i < kMaxGpuProcesses; ++i)
      out.push_back({infos[i].pid, used_bytes(infos[i].usedGpuMemory)});
  } else if (api.processes_v1) {
    nvml::nvmlProcessInfo_v1_t infos[kMaxGpuProcesses];
    if (call("nvmlDeviceGetComputeRunningProcesses", api.processes_v1, d, &count, infos) != kSuccess) return;
    for (unsigned i = 0; i < count && i < kMaxGpuProcesses; ++i)
      out.push_back({infos[i].pid, used_bytes(infos[i].usedGpuMemory)});
  } else {
    return;
  }
  g.processes = std::move(out);
}

}  // namespace

void read_device(const nvml::Api& api, const NvmlCaller& call, nvmlDevice_t device, GpuInfo& g) {
  read_identity(api, call, device, g);
  read_sensors(api, call, device, g);
  if (g.lost) return;  // every other call would answer GPU_IS_LOST too
  read_memory_health(api, call, device, g);
  read_pcie(api, call, device, g);
  read_recovery_action(api, call, device, g);
  read_nvlinks(api, call, device, g);
  read_processes(api, call, device, g);
}

}  // namespace trainwatch::agent
