#include "web/monitor_series.h"

#include <algorithm>
#include <map>

#include "web/uptime_days.h"

namespace trainwatch::web {
namespace {

namespace json = boost::json;

json::array points_json(std::span<const SeriesPoint> points) {
  json::array out;
  for (const SeriesPoint& p : points) {
    out.push_back(json::array{p.at_s, p.mean_ms ? json::value(*p.mean_ms) : json::value(nullptr), p.failed});
  }
  return out;
}

// Raw results of the range, averaged: the points and where they begin.
Result<std::pair<std::vector<SeriesPoint>, int64_t>> raw_points(Store& store, const std::string& monitor,
                                                                int64_t from_ms, int64_t now_ms) {
  auto results = store.results(ResultQuery{monitor, std::nullopt, kMaxRawRead});
  if (!results) return results.error();
  std::erase_if(*results, [from_ms](const CheckResult& r) { return to_unix_ms(r.at) < from_ms; });
  int64_t begins = from_ms;
  if (static_cast<int>(results->size()) == kMaxRawRead) begins = to_unix_ms(results->back().at);
  const int64_t step = std::max<int64_t>(1'000, (now_ms - begins) / static_cast<int64_t>(kMaxPoints) + 1);
  return std::pair(bucket_results(*results, begins, step), begins);
}

// Hourly rollups of the range, and daily ones for the days before the first hourly row.
Result<std::vector<SeriesPoint>> rollup_range(Store& store, const std::string& monitor, int64_t from_ms,
                                              int64_t now_ms) {
  auto hourly = store.uptime(UptimeQuery{monitor, RollupResolution::kHour, from_ms, now_ms + 1});
  if (!hourly) return hourly.error();
  std::vector<SeriesPoint> points;
  const int64_t hourly_from = hourly->empty() ? now_ms : hourly->front().start_ms;
  if (hourly_from - from_ms > kDayMs) {
    auto daily =
        store.uptime(UptimeQuery{monitor, RollupResolution::kDay, from_ms, hourly_from - kDayMs + 1});
    if (!daily) return daily.error();
    points = rollup_points(*daily);
  }
  auto rest = rollup_points(*hourly);
  points.insert(points.end(), rest.begin(), rest.end());
  return points;
}

}  // namespace

std::optional<ChartRange> chart_range(std::string_view name) {
  if (name == "1h") return ChartRange{"1h", kHourMs};
  if (name == "24h") return ChartRange{"24h", kDayMs};
  if (name == "7d") return ChartRange{"7d", 7 * kDayMs};
  if (name == "30d") return ChartRange{"30d", 30 * kDayMs};
  return std::nullopt;
}

std::vector<SeriesPoint> bucket_results(std::span<const CheckResult> results, int64_t from_ms,
                                        int64_t step_ms) {
  struct Sum {
    double ms = 0;
    int64_t ok = 0, failed = 0;
  };
  std::map<int64_t, Sum> sums;
  for (const CheckResult& r : results) {
    const int64_t at = to_unix_ms(r.at);
    if (at < from_ms || step_ms <= 0) continue;
    Sum& s = sums[from_ms + (at - from_ms) / step_ms * step_ms];
    if (r.ok) {
      s.ms += r.latency_ms;
      ++s.ok;
    } else {
      ++s.failed;
    }
  }
  std::vector<SeriesPoint> out;
  out.reserve(sums.size());
  for (const auto& [start, s] : sums) {
    out.push_back(SeriesPoint{
        start / 1000, s.ok > 0 ? std::optional(s.ms / static_cast<double>(s.ok)) : std::nullopt, s.failed});
  }
  return out;
}

std::vector<SeriesPoint> rollup_points(std::span<const UptimeBucket> buckets) {
  std::vector<SeriesPoint> out;
  for (const UptimeBucket& b : buckets) {
    if (b.checks <= 0) continue;
    out.push_back(
        SeriesPoint{b.start_ms / 1000, b.latency_sum_ms / static_cast<double>(b.checks), b.checks - b.ok});
  }
  return out;
}

Result<json::object> monitor_series(Store& store, const std::string& monitor, const ChartRange& range,
                                    SystemTime now) {
  const int64_t now_ms = to_unix_ms(now);
  const int64_t from_ms = now_ms - range.width_ms;
  json::object out{{"range", range.name}, {"from", from_ms / 1000}, {"to", now_ms / 1000}};
  if (range.width_ms <= kDayMs) {
    auto raw = raw_points(store, monitor, from_ms, now_ms);
    if (!raw) return raw.error();
    out["points"] = points_json(raw->first);
    out["begins"] = raw->second / 1000;
  } else {
    auto points = rollup_range(store, monitor, from_ms, now_ms);
    if (!points) return points.error();
    out["points"] = points_json(*points);
    out["begins"] = from_ms / 1000;
  }
  auto incidents = store.incidents(IncidentQuery{monitor, std::nullopt, 200});
  if (!incidents) return incidents.error();
  json::array spans;
  for (const Incident& i : *incidents) {
    const int64_t end = i.ended ? to_unix_ms(*i.ended) : now_ms;
    if (end < from_ms) continue;
    spans.push_back(json::array{std::max(to_unix_ms(i.started), from_ms) / 1000, end / 1000});
  }
  out["incidents"] = std::move(spans);
  return out;
}

}  // namespace trainwatch::web
