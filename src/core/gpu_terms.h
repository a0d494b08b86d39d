// The words for what NVML reports as numbers: clock event reasons (why the GPU's clocks are
// below their maximum) and the driver's GPU recovery action. The agent writes the words in
// /health, /metrics and its reports; the server reads them back. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainwatch {

// One bit of nvmlDeviceGetCurrentClocksEventReasons.
struct ClockEventReason {
  uint64_t bit;
  std::string_view word;  // "hw_thermal_slowdown": a Prometheus label value, a report word
  std::string_view text;  // "HW thermal slowdown": what a person reads
  bool slows;             // lowers the clocks under load: a slow rank's likely explanation
};

// The reasons by which the GPU slowed itself (HW slowdown, HW thermal, HW power brake):
// worth a warning, where the software power cap a busy GPU reaches by design is not.
inline constexpr uint64_t kHardwareSlowdownBits = 0x8 | 0x40 | 0x80;

// Every reason NVML defines, in bit order.
const std::vector<ClockEventReason>& clock_event_reasons();

// The words of the bits set in `bits`, in bit order; bits NVML does not define are left out.
std::vector<std::string_view> clock_event_words(uint64_t bits);
// The bits of `words` (as clock_event_words writes them); unknown words are left out.
uint64_t clock_event_bits(const std::vector<std::string>& words);

// "HW thermal slowdown, power brake" for the reasons among `bits` that slow a busy GPU
// (hardware slowdowns, thermal and power limits; not idle, application clocks or sync
// boost); "" when none.
std::string slowing_reasons_text(uint64_t bits);

// The driver's GPU recovery action (NVML field 230, driver 570 and newer).
enum class GpuRecoveryAction { kNone, kGpuReset, kNodeReboot, kDrainP2p, kDrainAndReset, kRecoverImexDomain };

// NVML's value (0..5) as the enum; nullopt for a value this build does not know.
std::optional<GpuRecoveryAction> recovery_action_of(int64_t value);
std::string_view recovery_action_word(GpuRecoveryAction a);  // "node_reboot"
std::optional<GpuRecoveryAction> recovery_action_from_word(std::string_view word);
std::string_view recovery_action_text(GpuRecoveryAction a);  // "reboot the node"

}  // namespace trainwatch
