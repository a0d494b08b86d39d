#include "http/accept_backoff.h"

#include <algorithm>

namespace trainwatch::http {

AcceptBackoff::Step AcceptBackoff::failed(const std::string& reason) {
  Step step{next_pause_, std::nullopt};
  next_pause_ = std::min(next_pause_ * 2, kMaxPause);
  ++failures_since_log_;
  const MonoTime now = clock_.monotonic_time();
  if (!last_log_ || now - *last_log_ >= kLogEvery) {
    step.log_line = "http: accept failed: " + reason + " (" + std::to_string(failures_since_log_) +
                    (failures_since_log_ == 1 ? " failure" : " failures") +
                    " since the last report); pausing new connections for up to " +
                    std::to_string(kMaxPause.count()) + " ms at a time while open ones are served";
    failures_since_log_ = 0;
    last_log_ = now;
  }
  return step;
}

}  // namespace trainwatch::http
