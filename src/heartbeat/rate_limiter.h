// A token bucket per heartbeat monitor: a flood on one ping URL is answered 429 while
// every other URL goes on as before (each bucket has its own lock, held for a few
// arithmetic operations).
#pragma once

#include <mutex>

#include "core/clock.h"

namespace trainwatch::heartbeat {

class RateLimiter {
 public:
  // A whole cluster pinging one URL at once (every rank after a checkpoint) fits in the
  // burst; the sustained rate is far above any honest use of one URL. At the bound the
  // ping is refused with 429 and nothing is stored.
  static constexpr double kBurst = 1000;
  static constexpr double kPerSecond = 200;

  explicit RateLimiter(MonoTime now) : updated_(now) {}

  // Takes one ping's worth from the bucket; false when it is empty.
  bool allow(MonoTime now) {
    std::lock_guard lock(mu_);
    const double elapsed = std::chrono::duration<double>(now - updated_).count();
    if (elapsed > 0) {
      tokens_ = std::min(kBurst, tokens_ + elapsed * kPerSecond);
      updated_ = now;
    }
    if (tokens_ < 1) return false;
    tokens_ -= 1;
    return true;
  }

 private:
  std::mutex mu_;
  double tokens_ = kBurst;
  MonoTime updated_;
};

}  // namespace trainwatch::heartbeat
