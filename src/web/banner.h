// The status page's one-line answer, from the states of the monitors on the page.
//
//   every active monitor down         -> major outage
//   some, not all, down               -> partial outage
//   none down, some failing checks    -> degraded performance (failed at least once but
//                                        not yet past `retries`, or pending after a failure)
//   otherwise                         -> all systems operational
//
// Paused monitors are left out: pausing is a decision, not an outage; so are monitors
// inside a maintenance window: planned work is not an outage either. A page whose
// monitors are all left out (or that lists none) reads operational.
#pragma once

#include <span>
#include <string_view>

#include "core/model.h"

namespace trainwatch::web {

enum class Banner { kOperational, kDegraded, kPartialOutage, kMajorOutage };

struct BannerInput {
  MonitorStatus status = MonitorStatus::kPending;
  int consecutive_failures = 0;
  bool in_maintenance = false;
};

Banner overall_banner(std::span<const BannerInput> monitors);

std::string_view banner_code(Banner b);  // "operational", "degraded", "partial_outage", "major_outage"
std::string_view banner_text(Banner b);  // "All systems operational", ...

// A monitor's pill: a word and an icon, never colour alone.
std::string_view status_word(MonitorStatus s);  // "Up", "Down", "Pending", "Paused"
std::string_view status_icon(MonitorStatus s);  // "✓", "✕", "…", "❚❚"

}  // namespace trainwatch::web
