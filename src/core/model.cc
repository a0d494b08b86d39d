#include "core/model.h"

namespace trainwatch {

std::string_view to_string(MonitorStatus s) {
  switch (s) {
    case MonitorStatus::kPending: return "pending";
    case MonitorStatus::kUp: return "up";
    case MonitorStatus::kDown: return "down";
    case MonitorStatus::kPaused: return "paused";
  }
  return "pending";
}

std::optional<MonitorStatus> monitor_status_from_string(std::string_view s) {
  for (auto status :
       {MonitorStatus::kPending, MonitorStatus::kUp, MonitorStatus::kDown, MonitorStatus::kPaused}) {
    if (to_string(status) == s) return status;
  }
  return std::nullopt;
}

}  // namespace trainwatch
