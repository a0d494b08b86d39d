#include "alerting/maintenance.h"

#include <algorithm>

namespace trainwatch::alerting {
namespace {

constexpr int64_t kDayMs = 86'400'000;
constexpr int64_t kWeekMs = 7 * kDayMs;

// Milliseconds since the most recent Sunday 00:00 UTC (1970-01-01 was a Thursday).
int64_t ms_into_week(int64_t unix_ms) {
  constexpr int64_t kThursdayOffset = 4 * kDayMs;
  return ((unix_ms + kThursdayOffset) % kWeekMs + kWeekMs) % kWeekMs;
}

}  // namespace

bool window_covers(const MaintenanceWindow& w, const std::string& monitor,
                   const std::vector<std::string>& tags) {
  if (std::find(w.monitors.begin(), w.monitors.end(), monitor) != w.monitors.end()) return true;
  return std::any_of(tags.begin(), tags.end(), [&](const std::string& t) {
    return std::find(w.tags.begin(), w.tags.end(), t) != w.tags.end();
  });
}

std::optional<SystemTime> window_active_until(const MaintenanceWindow& w, SystemTime now) {
  if (!w.recurring) {
    if (w.start && w.end && now >= *w.start && now < *w.end) return *w.end;
    return std::nullopt;
  }
  const int64_t now_ms = to_unix_ms(now);
  const int64_t period = w.weekday < 0 ? kDayMs : kWeekMs;
  const int64_t offset = int64_t{w.start_minute} * 60'000 + (w.weekday < 0 ? 0 : int64_t{w.weekday} * kDayMs);
  const int64_t into = w.weekday < 0 ? ((now_ms % kDayMs) + kDayMs) % kDayMs : ms_into_week(now_ms);
  // How long ago the most recent start was: a window that began yesterday at 23:00 and
  // lasts two hours is still active at 00:30.
  const int64_t since_start = ((into - offset) % period + period) % period;
  if (since_start < w.length.count()) return from_unix_ms(now_ms - since_start + w.length.count());
  return std::nullopt;
}

std::optional<SystemTime> held_until(const std::vector<MaintenanceWindow>& windows,
                                     const std::string& monitor, const std::vector<std::string>& tags,
                                     SystemTime now) {
  std::optional<SystemTime> until;
  // Follow chains of overlapping windows; bounded by the number of windows.
  for (size_t round = 0; round <= windows.size(); ++round) {
    const SystemTime at = until.value_or(now);
    std::optional<SystemTime> next;
    for (const auto& w : windows) {
      if (!window_covers(w, monitor, tags)) continue;
      if (auto end = window_active_until(w, at); end && (!next || *end > *next)) next = end;
    }
    if (!next || (until && *next <= *until)) break;
    until = next;
  }
  return until;
}

std::vector<MaintenanceWindow> planned_work(const std::vector<MaintenanceWindow>& windows) {
  std::vector<MaintenanceWindow> out;
  for (const auto& w : windows) {
    if (!w.snooze) out.push_back(w);
  }
  return out;
}

}  // namespace trainwatch::alerting
