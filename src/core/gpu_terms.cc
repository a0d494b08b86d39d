#include "core/gpu_terms.h"

#include "core/enum_names.h"

namespace trainwatch {

const std::vector<ClockEventReason>& clock_event_reasons() {
  // nvmlClocksEventReason* in nvml.h.
  static const std::vector<ClockEventReason> kReasons = {
      {0x1, "gpu_idle", "idle", false},
      {0x2, "applications_clocks", "application clocks setting", false},
      {0x4, "sw_power_cap", "SW power cap", true},
      {0x8, "hw_slowdown", "HW slowdown", true},
      {0x10, "sync_boost", "sync boost", false},
      {0x20, "sw_thermal_slowdown", "SW thermal slowdown", true},
      {0x40, "hw_thermal_slowdown", "HW thermal slowdown", true},
      {0x80, "hw_power_brake_slowdown", "HW power brake slowdown", true},
      {0x100, "display_clock_setting", "display clock setting", false},
  };
  return kReasons;
}

std::vector<std::string_view> clock_event_words(uint64_t bits) {
  std::vector<std::string_view> out;
  for (const auto& r : clock_event_reasons()) {
    if (bits & r.bit) out.push_back(r.word);
  }
  return out;
}

uint64_t clock_event_bits(const std::vector<std::string>& words) {
  uint64_t bits = 0;
  for (const auto& w : words) {
    for (const auto& r : clock_event_reasons()) {
      if (r.word == w) bits |= r.bit;
    }
  }
  return bits;
}

std::string slowing_reasons_text(uint64_t bits) {
  std::string out;
  for (const auto& r : clock_event_reasons()) {
    if ((bits & r.bit) && r.slows) out += (out.empty() ? "" : ", ") + std::string(r.text);
  }
  return out;
}

namespace {

constexpr EnumNames<GpuRecoveryAction, 6> kRecoveryWords{{
    {GpuRecoveryAction::kNone, "none"},
    {GpuRecoveryAction::kGpuReset, "gpu_reset"},
    {GpuRecoveryAction::kNodeReboot, "node_reboot"},
    {GpuRecoveryAction::kDrainP2p, "drain_p2p"},
    {GpuRecoveryAction::kDrainAndReset, "drain_and_reset"},
    {GpuRecoveryAction::kRecoverImexDomain, "recover_imex_domain"},
}};

}  // namespace

std::optional<GpuRecoveryAction> recovery_action_of(int64_t value) {
  // NVML_GPU_RECOVERY_ACTION_NONE = 0 ... RECOVER_IMEX_DOMAIN = 5, in the enum's order.
  if (value < 0 || value > static_cast<int64_t>(GpuRecoveryAction::kRecoverImexDomain)) return std::nullopt;
  return static_cast<GpuRecoveryAction>(value);
}

std::string_view recovery_action_word(GpuRecoveryAction a) { return name_of(kRecoveryWords, a); }

std::optional<GpuRecoveryAction> recovery_action_from_word(std::string_view word) {
  return value_of(kRecoveryWords, word);
}

std::string_view recovery_action_text(GpuRecoveryAction a) {
  switch (a) {
    case GpuRecoveryAction::kNone: return "nothing";
    case GpuRecoveryAction::kGpuReset: return "reset the GPU";
    case GpuRecoveryAction::kNodeReboot: return "reboot the node";
    case GpuRecoveryAction::kDrainP2p: return "drain peer-to-peer traffic";
    case GpuRecoveryAction::kDrainAndReset: return "drain peer-to-peer traffic and reset the GPU";
    case GpuRecoveryAction::kRecoverImexDomain: return "recover the IMEX domain";
  }
  return "nothing";
}

}  // namespace trainwatch
