// NVML as the agent calls it through dlopen: the types, constants and entry points it uses,
// declared here after NVIDIA's nvml.h (NVML API version 13; the header is not in Debian,
// and the agent must not need it to build). Struct layouts and the versioned names of the
// entry points are the header's: the fake library in tests/fakes/fake_nvml proves nothing
// about them, so each is checked against the header's sizes below and noted where the
// header keeps an older layout under an older name.
#pragma once

#include <cstddef>
#include <string>

namespace trainwatch::agent::nvml {

// NOLINTBEGIN(readability-identifier-naming): NVML's own C types, named as nvml.h names them.
using nvmlReturn_t = int;  // an enum in nvml.h; an int in the ABI
using nvmlDevice_t = struct nvmlDevice_st*;
using nvmlEventSet_t = struct nvmlEventSet_st*;
using nvmlEnableState_t = int;  // NVML_FEATURE_DISABLED 0, NVML_FEATURE_ENABLED 1

// nvmlReturn_t values the agent tells apart.
constexpr nvmlReturn_t kSuccess = 0;
constexpr nvmlReturn_t kInvalidArgument = 2;
constexpr nvmlReturn_t kNotSupported = 3;
constexpr nvmlReturn_t kNoPermission = 4;
constexpr nvmlReturn_t kInsufficientSize = 7;
constexpr nvmlReturn_t kTimeout = 10;
constexpr nvmlReturn_t kFunctionNotFound = 13;
constexpr nvmlReturn_t kGpuIsLost = 15;

constexpr int kTemperatureGpu = 0;                // NVML_TEMPERATURE_GPU
constexpr int kTemperatureThresholdSlowdown = 1;  // NVML_TEMPERATURE_THRESHOLD_SLOWDOWN
constexpr int kClockSm = 1;                       // NVML_CLOCK_SM
constexpr int kClockMem = 2;                      // NVML_CLOCK_MEM
constexpr int kMemoryErrorUncorrected = 1;        // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
constexpr int kVolatileEcc = 0;                   // NVML_VOLATILE_ECC
constexpr int kRetiredMultipleSingleBit = 0;      // NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS
constexpr int kRetiredDoubleBit = 1;              // NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR
constexpr unsigned kNvlinkMaxLinks = 36;          // NVML_NVLINK_MAX_LINKS (18 before API 13)
// nvmlNvLinkErrorCounter_t
constexpr int kNvlinkErrorReplay = 0;
constexpr int kNvlinkErrorRecovery = 1;
constexpr int kNvlinkErrorCrcFlit = 2;
constexpr int kNvlinkErrorCrcData = 3;
constexpr unsigned kFieldGpuRecoveryAction = 230;      // NVML_FI_DEV_GET_GPU_RECOVERY_ACTION (driver >= 570)
constexpr unsigned long long kEventXidCritical = 0x8;  // nvmlEventTypeXidCriticalError
constexpr unsigned long long kValueNotAvailable = ~0ULL;  // NVML_VALUE_NOT_AVAILABLE as an unsigned
constexpr size_t kUuidBufferSize = 96;                    // NVML_DEVICE_UUID_V2_BUFFER_SIZE
constexpr size_t kNameBufferSize = 96;                    // NVML_DEVICE_NAME_V2_BUFFER_SIZE
constexpr size_t kBusIdBufferSize = 32;                   // NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE

struct nvmlMemory_t {
  unsigned long long total, free, used;
};
struct nvmlUtilization_t {
  unsigned int gpu, memory;
};
// nvmlPciInfo_t as nvmlDeviceGetPciInfo_v3 fills it (busIdLegacy is 16 bytes).
struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[kBusIdBufferSize];
};
// nvmlProcessInfo_v1_t: what the unversioned nvmlDeviceGetComputeRunningProcesses fills.
struct nvmlProcessInfo_v1_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
};
// nvmlProcessInfo_t (= nvmlProcessInfo_v2_t): what _v2 and _v3 fill.
struct nvmlProcessInfo_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId, computeInstanceId;
};
struct nvmlEventData_t {
  nvmlDevice_t device;
  unsigned long long eventType;
  unsigned long long eventData;  // the XID; 999 for an XID the driver does not know
  unsigned int gpuInstanceId, computeInstanceId;
};
union nvmlValue_t {
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
  unsigned short usVal;
};
// nvmlValueType_t
constexpr int kValueDouble = 0, kValueUnsignedInt = 1, kValueUnsignedLong = 2, kValueUnsignedLongLong = 3,
              kValueSignedLongLong = 4, kValueSignedInt = 5, kValueUnsignedShort = 6;
struct nvmlFieldValue_t {
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp;
  long long latencyUsec;
  int valueType;  // nvmlValueType_t
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
};
// NOLINTEND(readability-identifier-naming)

// The layouts on x86-64 and aarch64 Linux, as nvml.h's compile to (LP64).
static_assert(sizeof(nvmlMemory_t) == 24);
static_assert(sizeof(nvmlPciInfo_t) == 68);
static_assert(sizeof(nvmlProcessInfo_v1_t) == 16);
static_assert(sizeof(nvmlProcessInfo_t) == 24);
static_assert(sizeof(nvmlEventData_t) == 32);
static_assert(sizeof(nvmlFieldValue_t) == 40 && offsetof(nvmlFieldValue_t, value) == 32);

// The entry points, each from the newest versioned name the library exports (nvml.h maps
// the plain name to it with a #define); null when the library has none of its names. A null
// entry reads as "not supported", never as an error.
struct Api {
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*count)(unsigned*) = nullptr;
  nvmlReturn_t (*handle)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*pci_info)(nvmlDevice_t, nvmlPciInfo_t*) = nullptr;
  nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*temperature_threshold)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*ecc)(nvmlDevice_t, int, int, unsigned long long*) = nullptr;
  nvmlReturn_t (*clock_events)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*remapped_rows)(nvmlDevice_t, unsigned*, unsigned*, unsigned*, unsigned*) = nullptr;
  nvmlReturn_t (*retired_pages)(nvmlDevice_t, int, unsigned*, unsigned long long*) = nullptr;
  nvmlReturn_t (*retired_pending)(nvmlDevice_t, nvmlEnableState_t*) = nullptr;
  nvmlReturn_t (*nvlink_state)(nvmlDevice_t, unsigned, nvmlEnableState_t*) = nullptr;
  nvmlReturn_t (*nvlink_errors)(nvmlDevice_t, unsigned, int, unsigned long long*) = nullptr;
  nvmlReturn_t (*pcie_replays)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*pcie_gen)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*pcie_max_gen)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*pcie_width)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*pcie_max_width)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*field_values)(nvmlDevice_t, int, nvmlFieldValue_t*) = nullptr;
  // Running compute processes: _v3/_v2 fill nvmlProcessInfo_t; the unversioned name fills
  // nvmlProcessInfo_v1_t. At most one of the two is set.
  nvmlReturn_t (*processes)(nvmlDevice_t, unsigned*, nvmlProcessInfo_t*) = nullptr;
  nvmlReturn_t (*processes_v1)(nvmlDevice_t, unsigned*, nvmlProcessInfo_v1_t*) = nullptr;
  nvmlReturn_t (*event_set_create)(nvmlEventSet_t*) = nullptr;
  nvmlReturn_t (*event_set_free)(nvmlEventSet_t) = nullptr;
  nvmlReturn_t (*register_events)(nvmlDevice_t, unsigned long long, nvmlEventSet_t) = nullptr;
  nvmlReturn_t (*event_wait)(nvmlEventSet_t, nvmlEventData_t*, unsigned) = nullptr;
};

// Fills `api` from the library `lib` (a dlopen handle). False, with why, when the library
// lacks what every use needs (init, the device count and handles).
bool resolve(void* lib, Api& api, std::string* error);

}  // namespace trainwatch::agent::nvml
