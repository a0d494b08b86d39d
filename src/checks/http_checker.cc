#include "checks/http_checker.h"

namespace trainwatch::checks {

HttpChecker::HttpChecker(boost::asio::io_context& io, const Clock& clock, TimerFactory& timers)
    : curl_(io, clock), plain_(io, clock, timers, curl_) {}

void HttpChecker::check(std::shared_ptr<const MonitorConfig> monitor, CheckDone done) {
  plain_.check(std::move(monitor), std::move(done));  // it hands curl_ what is not plain HTTP
}

}  // namespace trainwatch::checks
