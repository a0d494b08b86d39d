// The status page's day strip: one segment per UTC day, from daily rollup buckets.
//
// Levels (the bar's colour, also given in words): "ok" at 99.95 % or more, "warn" from
// 95 % up to that, "bad" below 95 %, "none" for a day without a single check (grey, and
// left out of the overall percentage rather than counted as down).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "storage/store.h"
#include "views/monitor_uptime.h"

namespace trainwatch::web {

// One hour and one UTC day in milliseconds: the strip's unit, and the units of the pages'
// ranges and rollups.
inline constexpr int64_t kHourMs = 3'600'000;
inline constexpr int64_t kDayMs = 24 * kHourMs;

struct DaySegment {
  int64_t day_ms = 0;
  std::string date;  // "2026-11-29"
  std::optional<double> uptime_pct;
  std::string level;  // ok, warn, bad, none
  int incidents = 0;  // incidents that started that day
  std::string label;  // "2026-11-29: 99.50% uptime, 1 incident" (tooltip and screen readers)
};

struct IncidentStart {
  int64_t started_ms = 0;
};

// `days` segments ending with the day holding `now_ms`, oldest first. `buckets` are daily
// buckets oldest first; any outside the window are ignored.
std::vector<DaySegment> day_segments(std::span<const UptimeBucket> buckets,
                                     std::span<const IncidentStart> incidents, int64_t now_ms, int days);

using views::uptime_percent;  // every page, badge and report counts it the same way

// "99.98%": two decimals, never rounded up to 100 unless it is 100.
std::string format_percent(double pct);

}  // namespace trainwatch::web
