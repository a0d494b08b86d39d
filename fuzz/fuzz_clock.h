// The clock of the fuzzers that run the server's handlers: every read moves it one second
// on, so rate limits and deadlines pass and reopen as inputs go by, and a crash found at
// some count of reads happens again at the same count when its input is replayed alone.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "core/clock.h"

namespace trainwatch::fuzz {

class SteppingClock final : public Clock {
 public:
  SystemTime system_time() const override { return SystemTime(std::chrono::seconds(kStart + step())); }
  MonoTime monotonic_time() const override { return MonoTime(std::chrono::seconds(step())); }

 private:
  static constexpr int64_t kStart = 1'790'000'000;  // 2026-09, seconds since the epoch
  int64_t step() const { return reads_.fetch_add(1, std::memory_order_relaxed) + 1; }
  mutable std::atomic<int64_t> reads_{0};
};

}  // namespace trainwatch::fuzz
