#include "alerting/dependency_rule.h"

namespace trainwatch::alerting {

DependencyEffect dependency_effect(const Incident& incident, bool closing, bool parent_down, bool released) {
  if (incident.caused_by.empty() || released) return DependencyEffect::kNone;
  if (closing || parent_down) return DependencyEffect::kSuppress;
  return DependencyEffect::kRelease;
}

}  // namespace trainwatch::alerting
