#include "core/model.h"

#include "core/enum_names.h"

namespace trainwatch {
namespace {

constexpr EnumNames<MonitorStatus, 4> kMonitorStatusNames{{{MonitorStatus::kPending, "pending"},
                                                           {MonitorStatus::kUp, "up"},
                                                           {MonitorStatus::kDown, "down"},
                                                           {MonitorStatus::kPaused, "paused"}}};

}  // namespace

std::string_view to_string(MonitorStatus s) { return name_of(kMonitorStatusNames, s); }

std::optional<MonitorStatus> monitor_status_from_string(std::string_view s) {
  return value_of(kMonitorStatusNames, s);
}

}  // namespace trainwatch
