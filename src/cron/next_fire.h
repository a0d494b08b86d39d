// When a cron expression next fires after a given instant, in a given time zone. Pure:
// the zone is passed in (zone.h loads one); nothing reads the clock.
//
// Fire times are local wall-clock times in `zone`, mapped to instants as cron does it
// across daylight-saving changes:
//  - a local time that does not exist (spring forward: 02:30 on the last Sunday of March
//    in Europe/Berlin) fires once, at the instant the clocks jump (03:00 local), the
//    first moment after the gap. Every fire time inside the gap falls onto that one
//    instant, so "*/15 2 * * *" fires once that night, at 03:00.
//  - a local time that occurs twice (fall back: 02:30 on the last Sunday of October)
//    fires once, at its first occurrence (02:30 summer time), never again an hour later.
// This is cctz's default mapping, and what Vixie cron and cronie do for jobs at a fixed
// time. It is deliberately lenient for a monitor: a ping is never expected at a moment
// the job's own cron may not have run it.
//
// Worked example, "30 2 * * *" in Europe/Berlin:
//   after 2024-03-30 12:00 CET   -> 2024-03-31 03:00 CEST (01:00 UTC; 02:30 does not exist)
//   after 2024-03-31 03:00 CEST  -> 2024-04-01 02:30 CEST (00:30 UTC)
//   after 2024-10-26 12:00 CEST  -> 2024-10-27 02:30 CEST (00:30 UTC, the first 02:30)
//   after 2024-10-27 02:30 CEST  -> 2024-10-28 02:30 CET  (01:30 UTC; not the second 02:30)
#pragma once

#include <optional>

#include <cctz/time_zone.h>

#include "core/clock.h"
#include "cron/expression.h"

namespace trainwatch::cron {

// The first fire time strictly after `after`; nullopt only for an expression that never
// fires (never_fires() is non-empty), after a search bounded to a few thousand days.
std::optional<SystemTime> next_fire(const Expression& e, const cctz::time_zone& zone, SystemTime after);

}  // namespace trainwatch::cron
