#include "views/shown_state.h"

namespace trainwatch::views {

ShownState shown_state(MonitorStatus status, bool in_maintenance) {
  switch (status) {
    case MonitorStatus::kPaused: return ShownState::kPaused;
    case MonitorStatus::kUp: return in_maintenance ? ShownState::kMaintenance : ShownState::kUp;
    case MonitorStatus::kDown: return in_maintenance ? ShownState::kMaintenance : ShownState::kDown;
    case MonitorStatus::kPending: return in_maintenance ? ShownState::kMaintenance : ShownState::kPending;
  }
  return ShownState::kPending;
}

ShownState shown_state(const engine::MonitorView& view) {
  return shown_state(view.state.status, view.maintenance_until.has_value());
}

std::string_view shown_code(ShownState s) {
  switch (s) {
    case ShownState::kUp: return "up";
    case ShownState::kDown: return "down";
    case ShownState::kPending: return "pending";
    case ShownState::kPaused: return "paused";
    case ShownState::kMaintenance: return "maintenance";
  }
  return "pending";
}

std::string_view shown_word(ShownState s) {
  switch (s) {
    case ShownState::kUp: return "Up";
    case ShownState::kDown: return "Down";
    case ShownState::kPending: return "Pending";
    case ShownState::kPaused: return "Paused";
    case ShownState::kMaintenance: return "Maintenance";
  }
  return "Pending";
}

std::string_view shown_icon(ShownState s) {
  switch (s) {
    case ShownState::kUp: return "\u2713";
    case ShownState::kDown: return "\u2715";
    case ShownState::kPending: return "\u2026";
    case ShownState::kPaused: return "\u275a\u275a";
    case ShownState::kMaintenance: return "\u2699";
  }
  return "\u2026";
}

}  // namespace trainwatch::views
