// A maintenance window as the API and the dashboard show it: the keys it would have in a
// config file (start/end, daily or weekly), plus its id, where it comes from and whether
// it holds notifications at `now`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "catalog/maintenance_catalog.h"
#include "core/clock.h"

namespace trainwatch::views {

// {"id", "source": "yaml"|"api", "monitors", "tags", "start"+"end" | "daily" | "weekly",
//  "active", "active_until" (when active), "ended" (a one-off window that is over),
//  "snooze" (it holds alerts only: catalog/monitor_snooze.h),
//  "created_at" (API windows)}
boost::json::object window_json(const catalog::CatalogWindow& window, SystemTime now);

// When the snoozes holding the monitor's alerts at `now` end (catalog/monitor_snooze.h);
// nullopt when none does.
std::optional<SystemTime> snoozed_until(const catalog::MaintenanceCatalog& windows,
                                        const std::string& monitor, const std::vector<std::string>& tags,
                                        SystemTime now);

}  // namespace trainwatch::views
