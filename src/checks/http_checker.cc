#include "checks/http_checker.h"

namespace trainwatch::checks {

HttpChecker::HttpChecker(boost::asio::io_context& io, const Clock& clock)
    : curl_(io, clock), plain_(io, clock, curl_) {}

void HttpChecker::check(std::shared_ptr<const MonitorConfig> monitor, CheckDone done) {
  Checker& client = PlainHttpChecker::can_check(std::get<HttpCheckSpec>(monitor->spec))
                        ? static_cast<Checker&>(plain_)
                        : static_cast<Checker&>(curl_);
  client.check(std::move(monitor), std::move(done));
}

}  // namespace trainwatch::checks
