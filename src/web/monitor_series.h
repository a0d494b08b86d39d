// A monitor's response-time chart over a range (1 h, 24 h, 7 d, 30 d), as JSON for
// static/monitor.js: points [unix seconds, mean latency ms or null, failed checks] and
// the incidents in the range as [start, end] seconds (an open one ends now), which the
// chart shades.
//
// Sources: 1 h and 24 h from raw results (at most kMaxRawRead, newest first; where that
// does not reach back to the range's start, the chart starts where it does and says so),
// averaged into at most kMaxPoints buckets; 7 d and 30 d from hourly rollups, and daily
// ones for the days the hourly rows were pruned from.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "core/model.h"
#include "core/result.h"
#include "storage/store.h"

namespace trainwatch::web {

inline constexpr int kMaxRawRead = 10'000;
inline constexpr size_t kMaxPoints = 360;

struct ChartRange {
  std::string name;  // "1h", "24h", "7d", "30d"
  int64_t width_ms = 0;
};

// nullopt for a name not in the list above.
std::optional<ChartRange> chart_range(std::string_view name);

struct SeriesPoint {
  int64_t at_s = 0;
  std::optional<double> mean_ms;  // of the checks that passed
  int64_t failed = 0;
};

// Pure: raw results (any order) averaged into buckets of `step_ms` from `from_ms`.
std::vector<SeriesPoint> bucket_results(std::span<const CheckResult> results, int64_t from_ms,
                                        int64_t step_ms);

// Pure: rollup buckets as points (their mean latency over every check in them).
std::vector<SeriesPoint> rollup_points(std::span<const UptimeBucket> buckets);

// Reads and builds the chart's JSON.
Result<boost::json::object> monitor_series(Store& store, const std::string& monitor, const ChartRange& range,
                                           SystemTime now);

}  // namespace trainwatch::web
