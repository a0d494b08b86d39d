// Clock: the only way trainwatch code reads time.
// system_time() is wall-clock time for display and storage; monotonic_time() is for
// intervals and deadlines and never jumps. Tests inject a ManualClock (tests/fakes).
// Thread-safety: implementations must be safe to call from any thread.
#pragma once

#include <chrono>
#include <cstdint>

namespace trainwatch {

using SystemTime = std::chrono::system_clock::time_point;
using MonoTime = std::chrono::steady_clock::time_point;
using Millis = std::chrono::milliseconds;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual SystemTime system_time() const = 0;
  virtual MonoTime monotonic_time() const = 0;
};

class SystemClock final : public Clock {
 public:
  SystemTime system_time() const override { return std::chrono::system_clock::now(); }
  MonoTime monotonic_time() const override { return std::chrono::steady_clock::now(); }
};

// Milliseconds since the Unix epoch: how times are stored and sent as JSON.
inline int64_t to_unix_ms(SystemTime t) {
  return std::chrono::duration_cast<Millis>(t.time_since_epoch()).count();
}
inline SystemTime from_unix_ms(int64_t ms) { return SystemTime(Millis(ms)); }

}  // namespace trainwatch
