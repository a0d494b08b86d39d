// The clock of the fuzzers that run the server's handlers: every read moves it one
// millisecond on, so rate limits and deadlines pass and reopen as inputs go by, and a crash
// found after some count of reads happens again when its input is replayed alone. One
// millisecond, not more: the engine arms real timers for `due - now`, and a clock that
// jumped past a monitor's interval between two reads would make every timer due at once,
// and polling the engine's io_context would never end.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "core/clock.h"

namespace trainwatch::fuzz {

class SteppingClock final : public Clock {
 public:
  SystemTime system_time() const override { return SystemTime(Millis(kStartMs + step())); }
  MonoTime monotonic_time() const override { return MonoTime(Millis(step())); }

 private:
  static constexpr int64_t kStartMs = 1'790'000'000'000;  // 2026-09, milliseconds since the epoch
  int64_t step() const { return reads_.fetch_add(1, std::memory_order_relaxed) + 1; }
  mutable std::atomic<int64_t> reads_{0};
};

}  // namespace trainwatch::fuzz
