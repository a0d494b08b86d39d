#include "checks/tcp_checker.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>

#include "checks/check_attempt.h"
#include "core/cause_text.h"

namespace trainwatch::checks {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

// One connection attempt: resolve when the host is a name, connect, close.
class Connect final : public CheckAttempt {
 public:
  Connect(asio::io_context& io, const Clock& clock, TimerFactory& timers,
          std::shared_ptr<const MonitorConfig> monitor, CheckDone done)
      : CheckAttempt(io, clock, timers, std::move(monitor), std::move(done)), resolver_(io), socket_(io) {}

 private:
  void begin() override {
    const auto& spec = std::get<TcpCheckSpec>(monitor().spec);
    boost::system::error_code ec;
    auto address = asio::ip::make_address(spec.host, ec);
    if (!ec) return connect({tcp::endpoint(address, spec.port)});
    resolver_.async_resolve(
        spec.host, std::to_string(spec.port),
        [self = self_as<Connect>()](boost::system::error_code rec, const tcp::resolver::results_type& found) {
          if (self->finished()) return;
          if (rec) return self->report(false, "dns: " + lower_first(rec.message()));
          self->connect({found.begin(), found.end()});
        });
  }

  void connect(const std::vector<tcp::endpoint>& endpoints) {
    asio::async_connect(socket_, endpoints,
                        [self = self_as<Connect>()](boost::system::error_code ec, const tcp::endpoint&) {
                          if (self->finished()) return;
                          self->report(!ec, ec ? "connect: " + lower_first(ec.message()) : "");
                        });
  }

  void cancel_io() override {
    resolver_.cancel();
    boost::system::error_code ignored;
    socket_.close(ignored);
  }

  void record_latency(double elapsed_ms) override {
    CheckAttempt::record_latency(elapsed_ms);
    result().timings.connect_ms = elapsed_ms;
  }

  tcp::resolver resolver_;
  tcp::socket socket_;
};

}  // namespace

void TcpChecker::check(std::shared_ptr<const MonitorConfig> monitor, CheckDone done) {
  auto attempt = std::make_shared<Connect>(io_, clock_, timers_, std::move(monitor), std::move(done));
  asio::post(io_, [attempt] { attempt->start(); });
}

}  // namespace trainwatch::checks
