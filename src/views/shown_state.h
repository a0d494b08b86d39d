// What every reader is shown as a monitor's state, in the API, the dashboard, status
// pages and badges alike: its status, or maintenance while a window covers it
// (MonitorView::maintenance_until). A paused monitor reads paused whatever the windows
// say: pausing is the stronger decision. A word and an icon go with each, never colour
// alone.
#pragma once

#include <string_view>

#include "engine/engine.h"

namespace trainwatch::views {

enum class ShownState { kUp, kDown, kPending, kPaused, kMaintenance };

ShownState shown_state(const engine::MonitorView& view);
ShownState shown_state(MonitorStatus status, bool in_maintenance);

std::string_view shown_code(ShownState s);  // "up", "down", "pending", "paused", "maintenance"
std::string_view shown_word(ShownState s);  // "Up", "Down", "Pending", "Paused", "Maintenance"
std::string_view shown_icon(ShownState s);  // "✓", "✕", "…", "❚❚", "⚙"

}  // namespace trainwatch::views
