// LogThrottle: lets one log line through per interval and counts the events held back,
// so a failure that repeats on every write (a full disk under a thousand pings a second)
// costs one line per interval, and that line says how many it stands for.
//
// Threading: admit() may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>

#include "core/clock.h"

namespace trainwatch {

class LogThrottle {
 public:
  explicit LogThrottle(std::chrono::nanoseconds interval) : interval_(interval) {}

  // Counts one event. Returns how many events the line written now stands for (this one
  // and those held back since the last line), or nothing when the last line is younger
  // than the interval: then the event is only counted.
  std::optional<uint64_t> admit(MonoTime now) {
    std::lock_guard lock(mu_);
    ++held_;
    if (last_ && now - *last_ < interval_) return std::nullopt;
    last_ = now;
    const uint64_t events = held_;
    held_ = 0;
    return events;
  }

 private:
  const std::chrono::nanoseconds interval_;
  std::mutex mu_;
  std::optional<MonoTime> last_;
  uint64_t held_ = 0;
};

}  // namespace trainwatch
