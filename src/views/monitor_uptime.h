// A monitor's uptime buckets as every reader is shown them (the dashboard, status pages,
// badges): its rollups for a checked monitor (storage/store.h: each check stands for one
// interval); for a heartbeat, time not DOWN (views/time_uptime.h) from its incidents,
// counted from its first stored result.
//
// Reads, for a heartbeat: its daily rollups from the start (one row a day: when it was
// first watched), the hourly ones of that day and at most kFirstHourResults results of its
// first hour (to the second), and its newest kMaxIncidents incidents (older ones lie
// before any window a page shows).
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "core/result.h"
#include "engine/engine.h"
#include "storage/store.h"

namespace trainwatch::views {

inline constexpr int kFirstHourResults = 500;
inline constexpr int kMaxIncidents = 500;

// When the monitor was first watched: its first stored result. Found from its first day
// of rollups (daily rows are never pruned), its first hour in that day (hourly rows are
// pruned with the raw results: where they are gone, the day's start is the answer), and
// that hour's results; where the hour holds more than kFirstHourResults, the oldest of
// those read. None: never.
Result<std::optional<int64_t>> first_watched_ms(Store& store, const std::string& name, int64_t now_ms);

Result<std::vector<UptimeBucket>> uptime_buckets(Store& store, const engine::MonitorView& view,
                                                 const UptimeQuery& query, SystemTime now);

// Time not DOWN from the monitor's incidents whatever its type: what a heartbeat's
// buckets are, and what a window shorter than a rollup bucket (the last hour) reads.
Result<std::vector<UptimeBucket>> time_uptime_buckets(Store& store, const UptimeQuery& query, SystemTime now);

// Uptime over the buckets (ok / checks) in percent; nullopt when there were no checks. The
// one formula of every page, badge and report.
std::optional<double> uptime_percent(std::span<const UptimeBucket> buckets);

}  // namespace trainwatch::views
