#include "web/uptime_days.h"

#include <cmath>
#include <cstdio>

#include "core/time_format.h"

namespace trainwatch::web {
namespace {

int64_t day_start(int64_t ms) { return ms - (((ms % kDayMs) + kDayMs) % kDayMs); }

std::string level_for(std::optional<double> pct) {
  if (!pct) return "none";
  if (*pct >= 99.95) return "ok";
  if (*pct >= 95.0) return "warn";
  return "bad";
}

}  // namespace

std::string format_percent(double pct) {
  // Floor to two decimals: 99.999 % reads 99.99 %, so a bad minute never shows as 100 %.
  double floored = std::floor(pct * 100.0) / 100.0;
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f%%", floored);
  return buffer;
}

std::vector<DaySegment> day_segments(std::span<const UptimeBucket> buckets,
                                     std::span<const IncidentStart> incidents, int64_t now_ms, int days) {
  std::vector<DaySegment> out;
  if (days <= 0) return out;
  const int64_t first = day_start(now_ms) - static_cast<int64_t>(days - 1) * kDayMs;
  out.resize(static_cast<size_t>(days));
  for (int i = 0; i < days; ++i) out[static_cast<size_t>(i)].day_ms = first + i * kDayMs;
  auto index_of = [&](int64_t ms) -> std::optional<size_t> {
    const int64_t start = day_start(ms);
    if (start < first || start > out.back().day_ms) return std::nullopt;
    return static_cast<size_t>((start - first) / kDayMs);
  };
  std::vector<int64_t> checks(out.size(), 0), ok(out.size(), 0);
  for (const auto& b : buckets) {
    if (auto i = index_of(b.start_ms)) {
      checks[*i] += b.checks;
      ok[*i] += b.ok;
    }
  }
  for (const auto& incident : incidents) {
    if (auto i = index_of(incident.started_ms)) ++out[*i].incidents;
  }
  for (size_t i = 0; i < out.size(); ++i) {
    DaySegment& d = out[i];
    d.date = format_rfc3339(from_unix_ms(d.day_ms)).substr(0, 10);
    if (checks[i] > 0) d.uptime_pct = 100.0 * static_cast<double>(ok[i]) / static_cast<double>(checks[i]);
    d.level = level_for(d.uptime_pct);
    d.label =
        d.date + ": " + (d.uptime_pct ? format_percent(*d.uptime_pct) + " uptime" : std::string("no data"));
    if (d.incidents > 0)
      d.label += ", " + std::to_string(d.incidents) + (d.incidents == 1 ? " incident" : " incidents");
  }
  return out;
}

}  // namespace trainwatch::web
