#include "views/maintenance_views.h"

#include <array>
#include <cstdio>

#include "alerting/maintenance.h"
#include "core/time_format.h"

namespace trainwatch::views {
namespace {

namespace json = boost::json;

std::string hh_mm(int minute) {
  char text[8];
  std::snprintf(text, sizeof text, "%02d:%02d", (minute / 60) % 24, minute % 60);
  return text;
}

json::array strings(const std::vector<std::string>& items) {
  json::array out;
  for (const auto& s : items) out.emplace_back(s);
  return out;
}

}  // namespace

json::object window_json(const catalog::CatalogWindow& c, SystemTime now) {
  static constexpr std::array<const char*, 7> kWeekdays = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};
  const MaintenanceWindow& w = c.window;
  json::object o;
  o["id"] = c.id;
  o["source"] = c.from_api ? "api" : "yaml";
  o["monitors"] = strings(w.monitors);
  o["tags"] = strings(w.tags);
  if (w.recurring) {
    const int end_minute = w.start_minute + static_cast<int>(w.length.count() / 60'000);
    const std::string range = hh_mm(w.start_minute) + "-" + hh_mm(end_minute);
    if (w.weekday < 0) {
      o["daily"] = range;
    } else {
      o["weekly"] = std::string(kWeekdays[static_cast<size_t>(w.weekday) % kWeekdays.size()]) + " " + range;
    }
  } else {
    if (w.start) o["start"] = format_rfc3339(*w.start);
    if (w.end) o["end"] = format_rfc3339(*w.end);
  }
  const auto until = alerting::window_active_until(w, now);
  o["active"] = until.has_value();
  if (until) o["active_until"] = format_rfc3339(*until);
  o["ended"] = !w.recurring && w.end && *w.end <= now;
  o["snooze"] = w.snooze;
  if (c.created) o["created_at"] = format_rfc3339(*c.created);
  return o;
}

std::optional<SystemTime> snoozed_until(const catalog::MaintenanceCatalog& windows,
                                        const std::string& monitor, const std::vector<std::string>& tags,
                                        SystemTime now) {
  std::vector<MaintenanceWindow> snoozes;
  for (auto& w : windows.windows()) {
    if (w.snooze) snoozes.push_back(std::move(w));
  }
  return alerting::held_until(snoozes, monitor, tags, now);
}

}  // namespace trainwatch::views
