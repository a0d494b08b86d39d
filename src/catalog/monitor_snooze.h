// MonitorSnoozes: "no more alerts about this monitor for an hour", from the API and the
// dashboard. A snooze is an API maintenance window over that one monitor, from now to its
// end, marked `snooze: true` (catalog/maintenance_catalog.h), so it is stored, survives a
// restart, reaches every replica, and holds the monitor's alerts as any window does:
//   - a DOWN (or reminder, warning, recovery) due during the snooze waits for its end;
//   - a monitor that recovers before then drops its held DOWN and the recovery both;
//   - one still down at the end pages then: a snooze delays an alert, it never loses one.
// Unlike a maintenance window it changes nothing else: the monitor's checks, state,
// uptime and status pages go on as if it were not there (alerting::planned_work).
//
// A new snooze replaces the monitor's current one, shorter or longer; unsnoozing deletes
// it. Windows with `snooze: true` made through /api/v1/maintenance (by tag, say) are
// theirs to delete there; views::snoozed_until counts them all the same.
//
// Threading: as the MaintenanceCatalog's: any thread; `done` runs on the store's writer
// thread (or the caller's, for a refusal).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "catalog/maintenance_catalog.h"
#include "core/clock.h"
#include "core/result.h"

namespace trainwatch::catalog {

class MonitorSnoozes {
 public:
  static constexpr Millis kShortest = std::chrono::minutes(1);
  static constexpr Millis kLongest = std::chrono::hours(24 * 7);

  MonitorSnoozes(MaintenanceCatalog& windows, const Clock& clock) : windows_(windows), clock_(clock) {}

  using Done = std::function<void(Result<SystemTime>)>;  // when the snooze ends, or why not
  // Errors: "snooze.invalid" (a length outside kShortest..kLongest), the catalog's
  // "maintenance.*" (an unknown monitor is "maintenance.invalid"), "store.*".
  void snooze(const std::string& monitor, Millis length, const Done& done);
  // Ends the monitor's snooze: held alerts go out at once. Not snoozed is not an error.
  void unsnooze(const std::string& monitor, const std::function<void(const Status&)>& done);

  // The windows the snoozes are kept among, for views::snoozed_until.
  const MaintenanceCatalog& windows() const { return windows_; }

 private:
  // The ids of the API snoozes of this one monitor that have not ended.
  std::vector<std::string> current(const std::string& monitor) const;

  MaintenanceCatalog& windows_;
  const Clock& clock_;
};

}  // namespace trainwatch::catalog
