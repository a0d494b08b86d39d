// Maintenance windows: whether a monitor's notifications are held at a time, and until
// when. Pure: config and a time in, an answer out. Times are UTC.
//
// Example: `daily: "23:00-01:00"` covers 23:00 to 01:00 the next morning; at 00:30 the
// window is active and ends at 01:00 that day. `weekly: "sun 02:00-04:00"` is active on
// Sundays from 02:00 to 04:00.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/notifications.h"
#include "core/clock.h"

namespace trainwatch::alerting {

bool window_covers(const MaintenanceWindow& window, const std::string& monitor,
                   const std::vector<std::string>& tags);

// When the window, if active at `now`, ends; nullopt when it is not active.
std::optional<SystemTime> window_active_until(const MaintenanceWindow& window, SystemTime now);

// When every window covering the monitor and active at `now` has ended (windows that
// overlap or touch are followed through); nullopt when none is active.
std::optional<SystemTime> held_until(const std::vector<MaintenanceWindow>& windows,
                                     const std::string& monitor, const std::vector<std::string>& tags,
                                     SystemTime now);

// The windows that are planned work, without the snoozes: those whose time counts as up
// and shows as "maintenance" (a snooze holds alerts only).
std::vector<MaintenanceWindow> planned_work(const std::vector<MaintenanceWindow>& windows);

}  // namespace trainwatch::alerting
