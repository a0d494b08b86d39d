// FiringAlerts: the alerts one channel delivered as firing and must tell its receiver
// about again while their incident stays open. Alertmanager forgets an alert at its
// endsAt (or after its resolve_timeout when it has none) unless it hears of it again;
// Prometheus keeps its alerts alive by re-sending every firing alert each resend delay,
// and the channel does the same. Pure: no I/O, no timers, no store; the dispatcher feeds it
// what was delivered and the time, and sends what it answers.
//
// Worked through, with an every of 1m: the DOWN of incident 7 is delivered at 12:00, so
// 7 is due again at 12:01; take_due(12:01) answers 7 and makes it due at 12:02, and so on,
// until the recovery of 7 is read from the outbox (forget(7)). A reminder of 7 delivered
// at 12:01:30 counts as a re-send: 7 is next due at 12:02:30.
//
// Bound: kMaxFiring alerts per channel; one more is not tracked (add() answers false) and
// the receiver lets it lapse at its endsAt, as if trainwatch had stopped.
//
// Threading: none of its own; the dispatcher uses it on its thread only.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "alerting/event.h"
#include "core/clock.h"

namespace trainwatch::alerting {

class FiringAlerts {
 public:
  static constexpr size_t kMaxFiring = 1000;

  explicit FiringAlerts(Millis every) : every_(every) {}

  Millis every() const { return every_; }
  // A reload changed the period: each alert keeps its due time until it is next sent.
  void set_every(Millis every) { every_ = every; }

  // `event` (a DOWN or a reminder of `incident`) was delivered at `now`: re-send it one
  // period later. `due_now` instead makes it due at once: an alert restored after a
  // restart, when nobody knows how long ago it was last sent. False at the bound.
  bool add(int64_t incident, AlertEvent event, SystemTime now, bool due_now = false);
  // The incident closed (its recovery is on its way) or is gone: never re-send it.
  void forget(int64_t incident);

  // At most `max` alerts due at `now`, longest overdue first; each is due again one
  // period from `now`, whether or not its re-send then gets through (the endsAt sent with
  // it leaves room for a few that do not).
  std::vector<AlertEvent> take_due(SystemTime now, size_t max);
  // When the next alert falls due; nullopt when none fires.
  std::optional<SystemTime> next_due() const;

  bool contains(int64_t incident) const { return alerts_.count(incident) != 0; }
  // The event `incident` fired with; nullptr when it does not fire here.
  const AlertEvent* find(int64_t incident) const {
    auto it = alerts_.find(incident);
    return it == alerts_.end() ? nullptr : &it->second.event;
  }
  size_t size() const { return alerts_.size(); }

 private:
  struct Alert {
    AlertEvent event;
    SystemTime due{};
  };

  Millis every_;
  std::map<int64_t, Alert> alerts_;  // by incident id
};

}  // namespace trainwatch::alerting
