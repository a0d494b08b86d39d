// AlertLinks: what the snooze link in an alert does when it is used (auth/alert_link.h
// says what it is). The server signs each alert's link with a key kept in the store, made
// at the first start and read by every later start and every replica, so a link stays good
// across restarts and whichever replica answers it.
//
// Using a link spends it first (UseAlertLink, one use across replicas: the store decides),
// then snoozes its monitor (catalog/monitor_snooze.h) for the length chosen. A link spent
// whose snooze then fails is not given back: the answer says so, and the monitor's page
// snoozes it all the same.
//
// Threading: any thread; `done` runs on the store's writer thread (or the caller's, for a
// refusal).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "auth/alert_link.h"
#include "catalog/monitor_snooze.h"
#include "core/clock.h"
#include "core/random.h"
#include "core/result.h"
#include "storage/store.h"

namespace trainwatch::catalog {

// The signing key: the stored one, or a new random one stored now. Waits for the store's
// writer, so call it at start-up. Errors: the store's.
Result<std::string> resolve_alert_link_key(Store& store, Random& random, SystemTime now);

class AlertLinks {
 public:
  AlertLinks(std::string key, Store& store, MonitorSnoozes& snoozes, const Clock& clock)
      : key_(std::move(key)), store_(store), snoozes_(snoozes), clock_(clock) {}

  const std::string& key() const { return key_; }

  // What the link says, if it is good now (auth::read_alert_link's errors).
  Result<auth::AlertLink> read(std::string_view token) const;
  // Whether the link was spent already: the "link.used" error, or the store's. (Two uses at
  // once both pass here; snooze() lets one through.)
  Status unused(std::string_view token) const;

  using Done = std::function<void(Result<SystemTime>)>;  // when the snooze ends, or why not
  // Spends the link and snoozes its monitor for `length`. Errors: read()'s, "link.used",
  // MonitorSnoozes::snooze's, "store.*".
  void snooze(std::string_view token, Millis length, const Done& done);

 private:
  std::string key_;
  Store& store_;
  MonitorSnoozes& snoozes_;
  const Clock& clock_;
};

}  // namespace trainwatch::catalog
