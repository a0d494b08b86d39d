// FakeCheckers: a CheckerSet whose checks take simulated time and answer what the test
// set, so an engine test decides how long each check runs and whether it passes.
//
// Each check of a monitor answers the monitor's current answer() (ok by default, after
// no time). A check whose answer has no duration stays running until finish(monitor).
// Answers come through the TimerFactory given (a ManualClock in tests), so, as the
// Checker contract asks, never from inside check() itself.
// Thread-safety: the thread that drives the timers only.
#pragma once

#include <algorithm>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checks/checker.h"
#include "core/clock.h"
#include "core/timer.h"
#include "engine/engine.h"

namespace trainwatch::testing {

class FakeCheckers final : public engine::CheckerSet, public checks::Checker {
 public:
  struct Started {
    std::string monitor;
    MonoTime at;
  };

  FakeCheckers(const Clock& clock, TimerFactory& timers) : clock_(clock), timers_(timers) {}

  // What the next checks of `monitor` answer, and after how long (nullopt: at finish()).
  void answer(const std::string& monitor, bool ok, std::optional<Millis> takes = Millis(0),
              std::string cause = "connection refused") {
    answers_[monitor] = Answer{ok, takes, ok ? std::string() : std::move(cause)};
  }
  // The next checks of `monitor` have nothing to judge yet (CheckResult::pending).
  void answer_pending(const std::string& monitor) { answers_[monitor] = Answer{true, Millis(0), {}, true}; }
  // The next checks of `monitor` report that they were not started (CheckResult::not_started).
  void answer_not_started(const std::string& monitor) {
    answers_[monitor] = Answer{false, Millis(0), std::string(checks::kNotStarted), false, true};
  }

  // Answers the oldest running check of `monitor` now; false when none runs.
  bool finish(const std::string& monitor) {
    for (auto it = running_.begin(); it != running_.end(); ++it) {
      if (it->monitor != monitor) continue;
      Running answered = std::move(*it);
      running_.erase(it);
      complete(answered);
      return true;
    }
    return false;
  }

  const std::vector<Started>& started() const { return started_; }
  // Start times of `monitor`'s checks, as offsets from `origin`.
  std::vector<Millis> starts_of(const std::string& monitor, MonoTime origin) const {
    std::vector<Millis> offsets;
    for (const auto& s : started_) {
      if (s.monitor == monitor) offsets.push_back(std::chrono::duration_cast<Millis>(s.at - origin));
    }
    return offsets;
  }
  size_t running() const { return running_.size(); }
  size_t max_running() const { return max_running_; }

  checks::Checker* for_type(MonitorType) override { return this; }

  void check(std::shared_ptr<const MonitorConfig> monitor, checks::CheckDone done) override {
    const Answer answer = answers_.count(monitor->name) ? answers_.at(monitor->name) : Answer{};
    started_.push_back(Started{monitor->name, clock_.monotonic_time()});
    CheckResult result;
    result.at = clock_.system_time();
    result.ok = answer.ok;
    result.cause = answer.cause;
    result.pending = answer.pending;
    result.not_started = answer.not_started;
    running_.push_back(
        Running{monitor->name, std::move(result), std::move(done), nullptr, clock_.monotonic_time()});
    max_running_ = std::max(max_running_, running_.size());
    if (!answer.takes) return;
    auto entry = std::prev(running_.end());
    entry->timer = timers_.make_timer();
    entry->timer->arm_after(clock_, *answer.takes, [this, entry] {
      Running answered = std::move(*entry);
      running_.erase(entry);
      complete(answered);
    });
  }

 private:
  struct Answer {
    bool ok = true;
    std::optional<Millis> takes = Millis(0);
    std::string cause;
    bool pending = false;
    bool not_started = false;
  };
  struct Running {
    std::string monitor;
    CheckResult result;
    checks::CheckDone done;
    std::unique_ptr<Timer> timer;
    MonoTime started;
  };

  void complete(Running& check) {
    check.result.latency_ms =
        std::chrono::duration<double, std::milli>(clock_.monotonic_time() - check.started).count();
    check.done(std::move(check.result));
  }

  const Clock& clock_;
  TimerFactory& timers_;
  std::map<std::string, Answer> answers_;
  std::list<Running> running_;
  std::vector<Started> started_;
  size_t max_running_ = 0;
};

}  // namespace trainwatch::testing
