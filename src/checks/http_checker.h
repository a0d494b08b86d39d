// HttpChecker: the checker of every `type: http` monitor. It sends a plain http:// check
// through PlainHttpChecker (Boost.Beast on the engine's io_context, a few system calls a
// check) and everything else through CurlHttpChecker (libcurl: TLS, certificates,
// redirects across schemes). Both judge the response with the same judge_http_response,
// so a monitor's verdict does not depend on which client ran it.
#pragma once

#include <boost/asio/io_context.hpp>

#include "checks/checker.h"
#include "checks/curl_http_checker.h"
#include "checks/plain_http_checker.h"
#include "core/clock.h"
#include "core/timer.h"

namespace trainwatch::checks {

class HttpChecker final : public Checker {
 public:
  HttpChecker(boost::asio::io_context& io, const Clock& clock, TimerFactory& timers);

  void check(std::shared_ptr<const MonitorConfig> monitor, CheckDone done) override;

 private:
  CurlHttpChecker curl_;
  PlainHttpChecker plain_;  // sees every check first and hands curl_ what is not plain HTTP
};

}  // namespace trainwatch::checks
