// What a heartbeat's next ping means now, in words: "next ping due in 12 min", "ping 3 min
// late (grace 10 min)", "ping 1 h 20 min overdue". A page never says "next ping due" at a
// time already past. Pure.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace trainwatch::web {

struct HeartbeatDue {
  std::string text;
  bool overdue = false;  // past the due time (late or down)
};

// nullopt for a monitor that is not a heartbeat, is paused, or awaits no ping.
std::optional<HeartbeatDue> heartbeat_due(const engine::MonitorView& view, SystemTime now);

// When each finish came against when it was expected: a period heartbeat expects each
// finish a period after the one before; "on time", "4 min late" (within grace), "1 h 20 min
// late: past grace" (it went DOWN). A schedule's fire times are not replayed here: its
// finishes say only how long after the one before they came. Starts, logs and the oldest
// finish (nothing before it) have no verdict.
struct PingTiming {
  std::string text;  // "" without a verdict
  bool late = false;
  bool missed = false;  // past grace
};

// One timing per ping of `newest_first` (a ping log, as the store reads it), same order.
std::vector<PingTiming> ping_timings(std::span<const PingRecord> newest_first, std::optional<Millis> period,
                                     Millis grace);

}  // namespace trainwatch::web
