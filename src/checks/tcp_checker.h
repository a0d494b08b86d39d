// TcpChecker: succeeds when a TCP connection to host:port is established within the
// monitor's timeout, then closes it. The seeds' checks of the chat server (8080) and of
// the rendezvous port (29500).
#pragma once

#include <boost/asio/io_context.hpp>

#include "checks/checker.h"
#include "core/clock.h"
#include "core/timer.h"

namespace trainwatch::checks {

class TcpChecker final : public Checker {
 public:
  TcpChecker(boost::asio::io_context& io, const Clock& clock, TimerFactory& timers)
      : io_(io), clock_(clock), timers_(timers) {}
  void check(std::shared_ptr<const MonitorConfig> monitor, CheckDone done) override;

 private:
  boost::asio::io_context& io_;
  const Clock& clock_;
  TimerFactory& timers_;  // the monitor's timeout
};

}  // namespace trainwatch::checks
