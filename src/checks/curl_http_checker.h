// CurlHttpChecker: HTTP(S) checks with libcurl's multi interface driven by Boost.Asio.
//
// One CURLM per checker; curl tells us which sockets to watch and when its timeout
// fires (CURLMOPT_SOCKETFUNCTION / CURLMOPT_TIMERFUNCTION), and asio waits on them. No
// thread per check: thousands of checks share the one io_context thread.
//
// Sockets are opened and closed through curl's open/close callbacks so asio stops
// watching a descriptor before it is closed (a reused descriptor number is then never
// confused with the old one).
//
// Bounds: a response body over kMaxHttpBodyBytes (http_verdict.h) fails the check ("body over 1 MiB") and is
// not kept; each check has its own timeout; every connection is fresh so DNS, connect
// and TLS times are real.
#pragma once

#include <memory>

#include <boost/asio/io_context.hpp>

#include "checks/checker.h"
#include "core/clock.h"

namespace trainwatch::checks {

class CurlHttpChecker final : public Checker {
 public:
  CurlHttpChecker(boost::asio::io_context& io, const Clock& clock);
  ~CurlHttpChecker() override;

  void check(std::shared_ptr<const MonitorConfig> monitor, CheckDone done) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace trainwatch::checks
