// ManualClock: a Clock and TimerFactory that move only when a test says so.
//
// advance(d) walks time forward to every armed timer's deadline within d, in deadline
// order (ties in arming order), and runs its callback on the calling thread, so
// callbacks that arm new timers inside the window fire too. Then time rests at now + d.
// A test thus reaches "the retry after 5 s" with advance(5s), never with a sleep.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include "core/clock.h"
#include "core/timer.h"

namespace trainwatch::testing {

class ManualClock final : public Clock, public TimerFactory {
 public:
  explicit ManualClock(SystemTime start = from_unix_ms(1'700'000'000'000)) : system_(start) {}
  ManualClock(const ManualClock&) = delete;
  ManualClock& operator=(const ManualClock&) = delete;

  SystemTime system_time() const override {
    std::lock_guard lock(mu_);
    return system_;
  }
  MonoTime monotonic_time() const override {
    std::lock_guard lock(mu_);
    return mono_;
  }

  // Moves time by d, firing every timer that falls due on the way.
  void advance(Millis d) {
    MonoTime target;
    {
      std::lock_guard lock(mu_);
      target = mono_ + d;
    }
    while (auto fn = take_next_due(target)) (*fn)();
    std::lock_guard lock(mu_);
    move_to(target);
  }

  // Moves time by d firing nothing, as for a process that was stopped (SIGSTOP) or starved
  // of CPU: timers that fell due meanwhile fire late, at the next advance().
  void stall(Millis d) {
    std::lock_guard lock(mu_);
    move_to(mono_ + d);
  }

  // Moves the wall clock alone, as an NTP step or `date -s` does: the monotonic clock and
  // the timers do not notice.
  void step_wall_clock(Millis d) {
    std::lock_guard lock(mu_);
    system_ += d;
  }

  // How many timers are armed, and the earliest deadline among them.
  size_t armed_timers() const {
    std::lock_guard lock(mu_);
    return armed_.size();
  }
  std::optional<MonoTime> next_deadline() const {
    std::lock_guard lock(mu_);
    if (armed_.empty()) return std::nullopt;
    return armed_.begin()->first.first;
  }

  std::unique_ptr<Timer> make_timer() override { return std::make_unique<ManualTimer>(*this); }

 private:
  using Key = std::pair<MonoTime, uint64_t>;  // deadline, arming order

  class ManualTimer final : public Timer {
   public:
    explicit ManualTimer(ManualClock& clock) : clock_(clock) {}
    ~ManualTimer() override { cancel(); }
    void arm(MonoTime deadline, std::function<void()> on_due) override {
      cancel();
      key_ = clock_.add(deadline, std::move(on_due));
    }
    void cancel() override {
      if (key_) clock_.remove(*key_);
      key_.reset();
    }

   private:
    ManualClock& clock_;
    std::optional<Key> key_;  // may name an entry that already fired; remove() then does nothing
  };

  Key add(MonoTime deadline, std::function<void()> fn) {
    std::lock_guard lock(mu_);
    Key key{deadline, next_seq_++};
    armed_.emplace(key, std::move(fn));
    return key;
  }
  void remove(const Key& key) {
    std::lock_guard lock(mu_);
    armed_.erase(key);
  }
  std::optional<std::function<void()>> take_next_due(MonoTime target) {
    std::lock_guard lock(mu_);
    if (armed_.empty() || armed_.begin()->first.first > target) return std::nullopt;
    auto node = armed_.extract(armed_.begin());
    move_to(node.key().first);
    return std::move(node.mapped());
  }
  void move_to(MonoTime t) {  // under mu_
    if (t <= mono_) return;
    system_ += std::chrono::duration_cast<SystemTime::duration>(t - mono_);
    mono_ = t;
  }

  mutable std::mutex mu_;
  SystemTime system_;
  MonoTime mono_{};
  uint64_t next_seq_ = 0;
  std::map<Key, std::function<void()>> armed_;
};

}  // namespace trainwatch::testing
