#include "views/monitor_uptime.h"

#include "views/time_uptime.h"

namespace trainwatch::views {
namespace {

constexpr int64_t kHourMs = 3'600'000;
constexpr int64_t kDayMs = 24 * kHourMs;

}  // namespace

Result<std::optional<int64_t>> first_watched_ms(Store& store, const std::string& name, int64_t now_ms) {
  auto days = store.uptime(UptimeQuery{name, RollupResolution::kDay, 0, now_ms + 1});
  if (!days) return days.error();
  if (days->empty()) return std::optional<int64_t>();
  const int64_t first_day = days->front().start_ms;
  auto hours = store.uptime(UptimeQuery{name, RollupResolution::kHour, first_day, first_day + kDayMs});
  if (!hours) return hours.error();
  if (hours->empty()) return std::optional<int64_t>(first_day);
  const int64_t first_hour = hours->front().start_ms;
  auto results = store.results(ResultQuery{name, first_hour + kHourMs, kFirstHourResults});
  if (!results) return results.error();
  int64_t first = first_hour;
  for (const CheckResult& r : *results) {
    const int64_t at = to_unix_ms(r.at);
    if (at >= first_hour) first = at;  // newest first: the last one of the hour is the first
  }
  return std::optional<int64_t>(first);
}

Result<std::vector<UptimeBucket>> uptime_buckets(Store& store, const engine::MonitorView& view,
                                                 const UptimeQuery& query, SystemTime now) {
  if (view.config->type != MonitorType::kHeartbeat) return store.uptime(query);
  return time_uptime_buckets(store, query, now);
}

Result<std::vector<UptimeBucket>> time_uptime_buckets(Store& store, const UptimeQuery& query,
                                                      SystemTime now) {
  const int64_t now_ms = to_unix_ms(now);
  auto from = first_watched_ms(store, query.monitor, now_ms);
  if (!from) return from.error();
  if (!*from) return std::vector<UptimeBucket>();
  auto incidents = store.incidents(IncidentQuery{query.monitor, std::nullopt, kMaxIncidents});
  if (!incidents) return incidents.error();
  const int64_t width = query.resolution == RollupResolution::kHour ? kHourMs : kDayMs;
  return time_buckets(*incidents, **from, now_ms, width, query.from_ms, query.to_ms);
}

std::optional<double> uptime_percent(std::span<const UptimeBucket> buckets) {
  int64_t checks = 0, ok = 0;
  for (const auto& b : buckets) {
    checks += b.checks;
    ok += b.ok;
  }
  if (checks == 0) return std::nullopt;
  return 100.0 * static_cast<double>(ok) / static_cast<double>(checks);
}

}  // namespace trainwatch::views
