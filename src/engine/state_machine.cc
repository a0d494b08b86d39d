#include "engine/state_machine.h"

namespace trainwatch::engine {

StateStep next_state(const MonitorState& current, const CheckResult& result, int retries) {
  StateStep step{current, Transition::kUnchanged};
  MonitorState& next = step.state;
  if (current.status == MonitorStatus::kPaused) return step;

  next.last_check = result.at;
  next.last_latency_ms = result.latency_ms;
  const MonitorStatus target_if_changed = result.ok ? MonitorStatus::kUp : MonitorStatus::kDown;

  if (result.ok) {
    next.consecutive_failures = 0;
    next.last_error.clear();
  } else {
    next.consecutive_failures = current.consecutive_failures + 1;
    next.last_error = result.cause;
  }

  const bool threshold_reached = result.ok || next.consecutive_failures >= retries + 1;
  if (current.status == target_if_changed) return step;
  if (!threshold_reached) {
    step.transition = Transition::kChangePending;
    return step;
  }
  next.status = target_if_changed;
  next.since = result.at;
  step.transition = Transition::kChanged;
  return step;
}

}  // namespace trainwatch::engine
