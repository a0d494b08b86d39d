// Timer: the only way trainwatch code waits for a moment in time.
//
// Components that wait (the engine's schedule and retries, the dispatcher's holds and
// backoff, retention) take a TimerFactory beside their Clock. In serve and the agent it
// is an AsioTimers bound to the component's io_context; in unit tests it is the
// ManualClock (tests/fakes), whose advance() fires every timer that falls due, in
// deadline order, so a test reaches any deadline by moving time instead of sleeping.
//
// Contract, for every implementation:
//  - arm() replaces whatever was armed: at most one callback is pending per Timer.
//  - After cancel(), a re-arm or the Timer's destruction, the earlier callback never
//    runs, even if its deadline had already passed (no stale wake-ups to filter out).
//  - The callback runs on the thread that drives the factory (the io_context's thread,
//    or the thread calling ManualClock::advance), never inside arm().
// Thread-safety: a Timer is used from its driving thread only.
#pragma once

#include <functional>
#include <memory>

#include "core/clock.h"

namespace trainwatch {

class Timer {
 public:
  virtual ~Timer() = default;
  virtual void arm(MonoTime deadline, std::function<void()> on_due) = 0;
  virtual void cancel() = 0;

  void arm_after(const Clock& clock, Millis delay, std::function<void()> on_due) {
    arm(clock.monotonic_time() + delay, std::move(on_due));
  }
};

class TimerFactory {
 public:
  virtual ~TimerFactory() = default;
  virtual std::unique_ptr<Timer> make_timer() = 0;
};

}  // namespace trainwatch
