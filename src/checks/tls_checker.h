// TlsChecker: a TLS handshake with host:port within the monitor's timeout, then judges the
// server's certificate (checks/tls_verdict.h): chain against the system store or ca_file,
// host name (server_name when set, else host; sent as SNI unless it is an IP address),
// and days left against warn_before and down_before. Nothing is sent after the handshake.
//
// The handshake itself never fails for a bad certificate: verification runs in
// SSL_VERIFY_NONE mode and its result is read afterwards, so an expired or self-signed
// certificate is named in the cause instead of showing as a handshake error.
#pragma once

#include <boost/asio/io_context.hpp>

#include "checks/checker.h"
#include "core/clock.h"
#include "core/timer.h"

namespace trainwatch::checks {

class TlsChecker final : public Checker {
 public:
  TlsChecker(boost::asio::io_context& io, const Clock& clock, TimerFactory& timers)
      : io_(io), clock_(clock), timers_(timers) {}
  void check(std::shared_ptr<const MonitorConfig> monitor, CheckDone done) override;

 private:
  boost::asio::io_context& io_;
  const Clock& clock_;
  TimerFactory& timers_;  // the monitor's timeout
};

}  // namespace trainwatch::checks
