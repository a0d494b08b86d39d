// Runs one probe on its own thread so a call that hangs (a wedged GPU driver) never blocks
// /health. The sampler asks for a run with kick(); snapshot() says what the last finished
// run found and whether a run has been in flight past its deadline.
//
// Threading: kick() and snapshot() are called by the sampler thread; the worker thread runs
// the probe function. A probe stuck forever keeps its thread; the destructor detaches it
// rather than joining (the process may be exiting; the thread holds only its own state).
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "agent/own_threads.h"
#include "core/clock.h"

namespace trainwatch::agent {

template <typename T>
class ProbeWorker {
 public:
  struct Snapshot {
    std::optional<T> last;  // nullopt until the first run finishes
    bool hung = false;      // a run has been in flight longer than the deadline
    Millis in_flight_for{0};
  };

  ProbeWorker(const Clock& clock, Millis deadline, std::function<T()> probe)
      : state_(std::make_shared<State>()), clock_(clock), deadline_(deadline) {
    state_->probe = std::move(probe);
    std::thread([s = state_] {
      register_own_thread();
      run(s);
    }).detach();
  }
  ~ProbeWorker() {
    std::lock_guard lock(state_->mu);
    state_->stop = true;
    state_->cv.notify_all();
  }
  ProbeWorker(const ProbeWorker&) = delete;
  ProbeWorker& operator=(const ProbeWorker&) = delete;

  // Starts a run unless one is in flight. Returns whether it started one.
  bool kick() {
    std::lock_guard lock(state_->mu);
    if (state_->in_flight || state_->requested) return false;
    state_->requested = true;
    state_->started = clock_.monotonic_time();
    state_->cv.notify_all();
    return true;
  }

  Snapshot snapshot() const {
    std::lock_guard lock(state_->mu);
    Snapshot s;
    s.last = state_->last;
    if (state_->in_flight || state_->requested) {
      s.in_flight_for = std::chrono::duration_cast<Millis>(clock_.monotonic_time() - state_->started);
      s.hung = s.in_flight_for > deadline_;
    }
    return s;
  }

  // For tests: waits (bounded by real time) until no run is in flight.
  bool wait_idle(Millis limit) const {
    std::unique_lock lock(state_->mu);
    return state_->cv.wait_for(lock, limit, [&] { return !state_->in_flight && !state_->requested; });
  }

 private:
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    std::function<T()> probe;
    std::optional<T> last;
    bool requested = false, in_flight = false, stop = false;
    MonoTime started{};
  };

  static void run(std::shared_ptr<State> s) {
    std::unique_lock lock(s->mu);
    for (;;) {
      s->cv.wait(lock, [&] { return s->requested || s->stop; });
      if (s->stop) return;
      s->requested = false;
      s->in_flight = true;
      lock.unlock();
      T result = s->probe();  // may block for ever; nothing else waits on it
      lock.lock();
      s->last = std::move(result);
      s->in_flight = false;
      s->cv.notify_all();
    }
  }

  std::shared_ptr<State> state_;
  const Clock& clock_;
  Millis deadline_;
};

}  // namespace trainwatch::agent
