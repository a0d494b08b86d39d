// AlertHook: the seam between the engine and alerting. Engine::apply() asks the hook,
// for every applied result, which notifications the result causes; they are written in
// the same store operation as the state change (RecordResult.outbox), so a state change
// and its alerts commit together or not at all. Every kind of monitor whose state goes
// through Engine::apply() (HTTP, TCP, heartbeat, ...) gets alerts this way.
//
// Threading: on_apply() runs on the engine's io thread and must not block; committed()
// runs on the engine's io thread once an operation with outbox rows committed and must
// only hand off (post), never block.
#pragma once

#include <optional>
#include <vector>

#include "config/config.h"
#include "core/model.h"
#include "engine/state_machine.h"
#include "storage/store.h"

namespace trainwatch::engine {

struct AppliedResult {
  const MonitorConfig& monitor;
  const MonitorState& before;
  const MonitorState& after;
  Transition transition;
  const CheckResult& result;
  const std::optional<Incident>& opened;  // the incident this result opened
  std::optional<Incident> closed;         // the incident this result closed (ended set)
  const std::optional<Incident>& open;    // the incident open after the result
  // The incident this result is about (opened, closed or open) was caused by a monitor it
  // depends on (Incident::caused_by), and that monitor is DOWN now: it still explains it.
  bool cause_explained = false;
};

class AlertHook {
 public:
  virtual ~AlertHook() = default;
  virtual std::vector<NewDelivery> on_apply(const AppliedResult& applied) = 0;
  virtual void committed() = 0;
  // The store could not take or show pings from `from` to `to` (engine/store_outages.h),
  // `why` in the store's words: the notifications that say so, once for the outage
  // (RecordStoreOutage). None by default.
  virtual std::vector<NewDelivery> on_store_outage(SystemTime /*from*/, SystemTime /*to*/,
                                                   const std::string& /*why*/) {
    return {};
  }
};

}  // namespace trainwatch::engine
