// What a monitor's dependency (depends_on) does to the alerts of one of its incidents.
// Pure; the planner applies it.
//
// An incident opened while a monitor it depends on was DOWN is stored as caused by that
// parent (engine/dependencies.h). Then:
//   - while the parent stays DOWN, the incident sends nothing: no DOWN, no reminder; the
//     parent's alerts list this monitor among the affected instead;
//   - if it closes before it ever alerted, it sends nothing either (no lone recovery);
//   - if the parent is no longer DOWN and this monitor still is, its cause is no longer
//     explained: it is released and alerts on its own, as a normal DOWN, from then on
//     (reminders and its recovery too).
// An incident of its own (nothing caused it) alerts as usual.
#pragma once

#include "core/model.h"

namespace trainwatch::alerting {

enum class DependencyEffect {
  kNone,      // its own incident, or one released before: alerts as usual
  kSuppress,  // explained by a parent that is DOWN, or closing before it ever alerted
  kRelease,   // no longer explained and still down: send its DOWN now
};

// `closing`: this result closes the incident. `parent_down`: the monitor named by
// incident.caused_by is DOWN now. `released`: a kRelease was already acted on for it.
DependencyEffect dependency_effect(const Incident& incident, bool closing, bool parent_down, bool released);

}  // namespace trainwatch::alerting
