#include "checks/check_attempt.h"

#include <boost/asio/post.hpp>

#include "core/duration.h"

namespace trainwatch::checks {

CheckAttempt::CheckAttempt(boost::asio::io_context& io, const Clock& clock, TimerFactory& timers,
                           std::shared_ptr<const MonitorConfig> monitor, CheckDone done)
    : io_(io),
      clock_(clock),
      deadline_(timers.make_timer()),
      monitor_(std::move(monitor)),
      done_(std::move(done)) {
  result_.at = clock_.system_time();
  started_ = clock_.monotonic_time();
}

void CheckAttempt::start() {
  if (!done_.still_wanted()) {
    result_.not_started = true;
    return report(false, std::string(kNotStarted));
  }
  // `this`, not a shared_ptr: the timer is the attempt's own and never calls back once
  // destroyed, and owning the attempt from its own member would keep it alive forever
  // should its io_context be dropped with the exchange pending.
  deadline_->arm_after(clock_, monitor_->timeout, [this] { on_deadline(); });
  begin();
}

void CheckAttempt::on_deadline() {
  report(false, "timeout after " + format_duration_config(monitor_->timeout));
}

void CheckAttempt::record_latency(double elapsed_ms) {
  result_.latency_ms = elapsed_ms;
  result_.timings.total_ms = elapsed_ms;
}

void CheckAttempt::report(bool ok, std::string cause) {
  if (finished_) return;
  stop();
  result_.ok = ok;
  result_.cause = std::move(cause);
  record_latency(elapsed_ms());
  boost::asio::post(
      io_, [done = std::move(done_), result = std::move(result_)]() mutable { done(std::move(result)); });
}

void CheckAttempt::hand_over(Checker& to) {
  if (finished_) return;
  stop();
  to.check(monitor_, std::move(done_));
}

void CheckAttempt::stop() {
  finished_ = true;
  deadline_->cancel();
  cancel_io();
}

double CheckAttempt::elapsed_ms() const {
  return std::chrono::duration<double, std::milli>(clock_.monotonic_time() - started_).count();
}

}  // namespace trainwatch::checks
