// AcceptBackoff: what the listener does when accept() fails.
//
// The failure that matters is EMFILE/ENFILE (no descriptor left): the pending connection
// stays in the kernel's queue, so an accept re-armed at once fails again at once and one
// thread spins at 100% CPU while every other handler on it waits. Instead the listener
// pauses before the next accept, kFirstPause after the first failure, doubling up to
// kMaxPause while failures go on, and back to kFirstPause after an accept that worked.
// A pause never stops connections already open: they keep being served, and each one
// that closes frees the descriptor the next accept needs.
//
// Logging: at most one line per kLogEvery, naming the error and how many accepts failed
// since the previous line, so a long shortage costs a line every 10 s, not one per try.
//
// Thread-safety: none; the listener calls it from its accept chain only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/clock.h"

namespace trainwatch::http {

class AcceptBackoff {
 public:
  static constexpr Millis kFirstPause{10};
  static constexpr Millis kMaxPause{100};
  static constexpr Millis kLogEvery{10'000};

  explicit AcceptBackoff(const Clock& clock) : clock_(clock) {}

  struct Step {
    Millis pause;                         // wait this long before accepting again
    std::optional<std::string> log_line;  // set when a line is due
  };

  // A failed accept with the system's reason ("Too many open files").
  Step failed(const std::string& reason);
  // An accept that worked: the next failure pauses kFirstPause again.
  void succeeded() { next_pause_ = kFirstPause; }

 private:
  const Clock& clock_;
  Millis next_pause_ = kFirstPause;
  uint64_t failures_since_log_ = 0;
  std::optional<MonoTime> last_log_;
};

}  // namespace trainwatch::http
