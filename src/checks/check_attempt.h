// CheckAttempt: one check of one monitor, the part every network checker shares. It arms
// the monitor's timeout through the TimerFactory, keeps the finished flag that lets exactly
// one of the exchange and the deadline report, measures the latency on the injected Clock,
// cancels the exchange's pending I/O when it ends and posts `done` back to the io_context.
//
// A checker derives one attempt type, supplies its exchange (begin(): resolve, connect,
// handshake, query...) and the hook that closes its own sockets (cancel_io()), and ends
// every step in report() or in the next step. Completion handlers hold the attempt through
// a shared_ptr; the deadline does not, so an attempt lives exactly as long as it has I/O
// pending (each step that does not report starts the next one before returning).
//
// Threading: created, started and finished on the thread that drives the io_context and
// the TimerFactory (with ManualClock, the test thread calling both poll() and advance()).
// `done` always runs from the io_context, never inside check() or the deadline's callback.
#pragma once

#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>

#include "checks/checker.h"
#include "core/clock.h"
#include "core/model.h"
#include "core/timer.h"

namespace trainwatch::checks {

class CheckAttempt : public std::enable_shared_from_this<CheckAttempt> {
 public:
  CheckAttempt(const CheckAttempt&) = delete;
  CheckAttempt& operator=(const CheckAttempt&) = delete;
  virtual ~CheckAttempt() = default;

  // Arms the deadline, then begins the exchange, unless the check is no longer wanted
  // (checker.h, CheckDone). Run from the io_context (checkers post it from check()), so
  // that an attempt failing at once still never calls `done` inline.
  void start();

 protected:
  CheckAttempt(boost::asio::io_context& io, const Clock& clock, TimerFactory& timers,
               std::shared_ptr<const MonitorConfig> monitor, CheckDone done);

  // The checker's exchange; it ends, possibly much later, in report().
  virtual void begin() = 0;
  // Closes or cancels whatever I/O the exchange has pending; its handlers then run with
  // operation_aborted and must return on finished().
  virtual void cancel_io() = 0;
  // The monitor's timeout passed first. By default "timeout after 2s".
  virtual void on_deadline();
  // Sets the result's latency and timings from the time the whole attempt took. By
  // default latency and total are that time.
  virtual void record_latency(double elapsed_ms);

  // Ends the attempt with this verdict unless it has already ended: stops the deadline and
  // the I/O, records the latency and posts `done` with the result.
  void report(bool ok, std::string cause);
  // Ends the attempt without a verdict of its own: `to` checks the monitor instead and
  // calls `done`.
  void hand_over(Checker& to);

  bool finished() const { return finished_; }
  double elapsed_ms() const;
  const MonitorConfig& monitor() const { return *monitor_; }
  const Clock& clock() const { return clock_; }
  CheckResult& result() { return result_; }

  // shared_from_this() as the checker's own attempt type, for its completion handlers.
  template <typename Derived>
  std::shared_ptr<Derived> self_as() {
    return std::static_pointer_cast<Derived>(shared_from_this());
  }

 private:
  void stop();

  boost::asio::io_context& io_;
  const Clock& clock_;
  std::unique_ptr<Timer> deadline_;
  std::shared_ptr<const MonitorConfig> monitor_;
  CheckDone done_;
  CheckResult result_;
  MonoTime started_;
  bool finished_ = false;
};

}  // namespace trainwatch::checks
