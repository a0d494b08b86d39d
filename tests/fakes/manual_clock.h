// ManualClock: a Clock that moves only when a test says so.
#pragma once

#include <mutex>

#include "core/clock.h"

namespace trainwatch::testing {

class ManualClock final : public Clock {
 public:
  explicit ManualClock(SystemTime start = from_unix_ms(1'700'000'000'000)) : system_(start) {}

  SystemTime system_time() const override {
    std::lock_guard lock(mu_);
    return system_;
  }
  MonoTime monotonic_time() const override {
    std::lock_guard lock(mu_);
    return mono_;
  }
  void advance(Millis d) {
    std::lock_guard lock(mu_);
    system_ += d;
    mono_ += d;
  }

 private:
  mutable std::mutex mu_;
  SystemTime system_;
  MonoTime mono_{};
};

}  // namespace trainwatch::testing
