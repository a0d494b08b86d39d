#include "checks/tcp_checker.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "core/cause_text.h"
#include "core/duration.h"

namespace trainwatch::checks {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

// One connection attempt. Whichever finishes first, the connect or the timer, reports;
// the other sees `finished` and does nothing.
struct Attempt : std::enable_shared_from_this<Attempt> {
  Attempt(asio::io_context& io, const Clock& c, std::shared_ptr<const MonitorConfig> m, CheckDone d)
      : resolver(io), socket(io), timer(io), monitor(std::move(m)), done(std::move(d)), clock(c) {
    result.at = clock.system_time();
    started = clock.monotonic_time();
  }

  void start() {
    const auto& spec = std::get<TcpCheckSpec>(monitor->spec);
    timer.expires_after(monitor->timeout);
    timer.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (!ec) self->report(false, "timeout after " + format_duration(self->monitor->timeout));
    });
    boost::system::error_code ec;
    auto address = asio::ip::make_address(spec.host, ec);
    if (!ec) return connect({tcp::endpoint(address, spec.port)});
    resolver.async_resolve(
        spec.host, std::to_string(spec.port),
        [self = shared_from_this()](boost::system::error_code rec, const tcp::resolver::results_type& found) {
          if (rec) return self->report(false, "dns: " + lower_first(rec.message()));
          self->connect({found.begin(), found.end()});
        });
  }

  void connect(const std::vector<tcp::endpoint>& endpoints) {
    asio::async_connect(socket, endpoints,
                        [self = shared_from_this()](boost::system::error_code ec, const tcp::endpoint&) {
                          if (ec == asio::error::operation_aborted) return;
                          self->report(!ec, ec ? "connect: " + lower_first(ec.message()) : "");
                        });
  }

  void report(bool ok, std::string cause) {
    if (finished) return;
    finished = true;
    timer.cancel();
    resolver.cancel();
    boost::system::error_code ignored;
    socket.close(ignored);
    result.ok = ok;
    result.cause = std::move(cause);
    result.latency_ms = std::chrono::duration<double, std::milli>(clock.monotonic_time() - started).count();
    result.timings.total_ms = result.latency_ms;
    result.timings.connect_ms = result.latency_ms;
    asio::post(socket.get_executor(),
               [d = std::move(done), r = std::move(result)]() mutable { d(std::move(r)); });
  }

  tcp::resolver resolver;
  tcp::socket socket;
  asio::steady_timer timer;
  std::shared_ptr<const MonitorConfig> monitor;
  CheckDone done;
  CheckResult result;
  MonoTime started;
  bool finished = false;
  const Clock& clock;
};

}  // namespace

void TcpChecker::check(std::shared_ptr<const MonitorConfig> monitor, CheckDone done) {
  auto attempt = std::make_shared<Attempt>(io_, clock_, std::move(monitor), std::move(done));
  asio::post(io_, [attempt] { attempt->start(); });
}

}  // namespace trainwatch::checks
