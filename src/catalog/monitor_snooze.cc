#include "catalog/monitor_snooze.h"

#include <memory>
#include <utility>

#include <boost/json.hpp>

#include "core/duration.h"
#include "core/json_text.h"
#include "core/time_format.h"

namespace trainwatch::catalog {
namespace {

// Deletes the windows one after the other; a window another replica deleted meanwhile is
// as good as deleted here. Calls `done` with the first other error, or ok.
void delete_snooze_windows(MaintenanceCatalog& windows, const std::shared_ptr<std::vector<std::string>>& ids,
                           size_t next, const std::function<void(const Status&)>& done) {
  if (next == ids->size()) return done(Status(Ok{}));
  windows.remove((*ids)[next], [&windows, ids, next, done](const Result<std::string>& removed) {
    if (!removed && removed.error().code != "maintenance.not_found") return done(removed.error());
    delete_snooze_windows(windows, ids, next + 1, done);
  });
}

}  // namespace

void MonitorSnoozes::snooze(const std::string& monitor, Millis length, const Done& done) {
  if (length < kShortest || length > kLongest) {
    return done(make_error("snooze.invalid", "for: found '" + format_duration_config(length) +
                                                 "'; expected a length from 1m to 7d"));
  }
  // Whole seconds, as the window's RFC 3339 times keep them: the end said is the end held.
  const SystemTime now = std::chrono::time_point_cast<std::chrono::seconds>(clock_.system_time());
  const SystemTime until = now + length;
  const boost::json::object spec{{"monitors", boost::json::array{boost::json::value(monitor)}},
                                 {"start", format_rfc3339(now)},
                                 {"end", format_rfc3339(until)},
                                 {"snooze", true}};
  auto replaced = std::make_shared<std::vector<std::string>>(current(monitor));
  windows_.create(json_text(spec), [this, replaced, until, done](const Result<std::string>& created) {
    if (!created) return done(created.error());
    delete_snooze_windows(windows_, replaced, 0, [until, done](const Status& deleted) {
      // The new snooze holds from its commit on; an old one that could not be deleted
      // only holds alerts longer, and unsnoozing tries it again.
      if (!deleted) return done(deleted.error());
      done(until);
    });
  });
}

void MonitorSnoozes::unsnooze(const std::string& monitor, const std::function<void(const Status&)>& done) {
  delete_snooze_windows(windows_, std::make_shared<std::vector<std::string>>(current(monitor)), 0, done);
}

std::vector<std::string> MonitorSnoozes::current(const std::string& monitor) const {
  const SystemTime now = clock_.system_time();
  std::vector<std::string> ids;
  for (const CatalogWindow& c : windows_.list()) {
    const MaintenanceWindow& w = c.window;
    const bool this_monitor_only = w.monitors.size() == 1 && w.monitors[0] == monitor && w.tags.empty();
    if (c.from_api && w.snooze && this_monitor_only && !(w.end && *w.end <= now)) ids.push_back(c.id);
  }
  return ids;
}

}  // namespace trainwatch::catalog
