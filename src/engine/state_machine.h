// The monitor state machine. Pure: a state and a result in, the next state and what kind
// of transition it was out. Persisting, incidents and notifying are the caller's.
//
//   pending --success--> up
//   pending --(retries+1) consecutive failures--> down
//   up      --failure, fewer than retries+1 in a row--> up (kChangePending)
//   up      --(retries+1)th consecutive failure--> down (kChanged)
//   down    --success--> up (kChanged)
//   paused  --any result--> paused (results are not applied while paused)
//
// Worked example, retries = 1 (DOWN after 2 failures in a row):
//   up, fail  -> up, consecutive_failures 1, kChangePending
//   up, fail  -> down, consecutive_failures 2, kChanged (caller opens an incident)
//   down, ok  -> up, consecutive_failures 0, kChanged (caller closes it)
#pragma once

#include "core/model.h"

namespace trainwatch::engine {

enum class Transition { kUnchanged, kChangePending, kChanged };

struct StateStep {
  MonitorState state;
  Transition transition = Transition::kUnchanged;
};

StateStep next_state(const MonitorState& current, const CheckResult& result, int retries);

}  // namespace trainwatch::engine
