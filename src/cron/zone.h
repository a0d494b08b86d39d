// Time zones by their tz database name ("Europe/Berlin", "UTC"), read through cctz from
// the system's database (/usr/share/zoneinfo, or $TZDIR). Never through the TZ
// environment variable or localtime(): a cctz::time_zone is a value every thread may use.
// Thread-safety: load_zone may be called from any thread (cctz caches zones under its lock).
#pragma once

#include <string>
#include <string_view>

#include <cctz/time_zone.h>

#include "core/clock.h"
#include "core/result.h"

namespace trainwatch::cron {

// The zone of that name. Refuses names that are not tz database names (a path, "..",
// odd characters) without touching the disk, and names the database lacks.
Result<cctz::time_zone> load_zone(std::string_view name);

// A wall-clock time for people, to the minute, with the zone's abbreviation:
// "2024-03-31 03:00 CEST", "2024-01-05 09:30 UTC".
std::string format_local(SystemTime t, const cctz::time_zone& zone);

}  // namespace trainwatch::cron
