#include "checks/dns_checker.h"

#include <array>
#include <fstream>
#include <sstream>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include "checks/dns_message.h"
#include "checks/dns_verdict.h"
#include "checks/resolv_conf.h"
#include "core/cause_text.h"
#include "core/duration.h"

namespace trainwatch::checks {
namespace {

namespace asio = boost::asio;
using udp = asio::ip::udp;
using tcp = asio::ip::tcp;

std::string endpoint_text(const asio::ip::address& address, uint16_t port) {
  return (address.is_v6() ? "[" + address.to_string() + "]" : address.to_string()) + ":" +
         std::to_string(port);
}

// One question asked. Whichever finishes first, the answer or the timer, reports; the
// other sees `finished` and does nothing.
struct Query : std::enable_shared_from_this<Query> {
  Query(asio::io_context& io, const Clock& c, std::shared_ptr<const MonitorConfig> m, CheckDone d,
        uint16_t query_id)
      : udp_socket(io),
        tcp_socket(io),
        timer(io),
        monitor(std::move(m)),
        done(std::move(d)),
        clock(c),
        id(query_id) {
    result.at = clock.system_time();
    started = clock.monotonic_time();
  }

  const DnsCheckSpec& spec() const { return std::get<DnsCheckSpec>(monitor->spec); }

  void start() {
    timer.expires_after(monitor->timeout);
    timer.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (!ec) {
        self->report(false,
                     "no answer from " + self->server + " within " + format_duration(self->monitor->timeout));
      }
    });
    std::string host = spec().resolver_host;
    uint16_t port = spec().resolver_port;
    if (host.empty()) {
      std::ifstream file(kResolvConfPath);
      std::stringstream text;
      text << file.rdbuf();
      auto nameserver = first_nameserver(text.str());
      if (!nameserver)
        return report(false, std::string("no resolver: ") + kResolvConfPath + " names no nameserver");
      host = *nameserver;
      port = 53;
    }
    boost::system::error_code ec;
    address = asio::ip::make_address(host, ec);
    if (ec) return report(false, "resolver '" + host + "' is not an IP address");
    resolver_port = port;
    server = endpoint_text(address, port);
    auto encoded = encode_dns_query(id, spec().name, static_cast<uint16_t>(spec().record));
    if (!encoded) return report(false, encoded.error().message);
    query = std::move(*encoded);

    // Connected, so an ICMP port unreachable comes back as "connection refused" and only
    // the resolver's own datagrams are read.
    udp_socket.open(address.is_v6() ? udp::v6() : udp::v4(), ec);
    if (!ec) udp_socket.connect(udp::endpoint(address, port), ec);
    if (ec) return report(false, "udp socket to " + server + ": " + lower_first(ec.message()));
    udp_socket.async_send(
        asio::buffer(query), [self = shared_from_this()](boost::system::error_code sec, size_t) {
          if (sec == asio::error::operation_aborted) return;
          if (sec) return self->report(false, "send to " + self->server + ": " + lower_first(sec.message()));
          self->receive_udp();
        });
  }

  void receive_udp() {
    udp_socket.async_receive(
        asio::buffer(buffer), [self = shared_from_this()](boost::system::error_code ec, size_t n) {
          if (ec == asio::error::operation_aborted) return;
          if (ec == asio::error::connection_refused) {
            return self->report(
                false, "connection refused by " + self->server + " (nothing listens on that UDP port)");
          }
          if (ec)
            return self->report(false, "receive from " + self->server + ": " + lower_first(ec.message()));
          self->answered(std::span<const uint8_t>(self->buffer.data(), n), /*over_tcp=*/false);
        });
  }

  // The answer did not fit a datagram: ask again over TCP, each message behind its
  // two-byte length (RFC 1035 section 4.2.2).
  void retry_over_tcp() {
    const uint16_t size = static_cast<uint16_t>(query.size());
    query.insert(query.begin(), {static_cast<uint8_t>(size >> 8), static_cast<uint8_t>(size & 0xFF)});
    tcp_socket.async_connect(tcp::endpoint(address, resolver_port), [self = shared_from_this()](
                                                                        boost::system::error_code ec) {
      if (ec == asio::error::operation_aborted) return;
      if (ec)
        return self->report(
            false, "truncated answer, and tcp to " + self->server + ": " + lower_first(ec.message()));
      asio::async_write(
          self->tcp_socket, asio::buffer(self->query), [self](boost::system::error_code wec, size_t) {
            if (wec == asio::error::operation_aborted) return;
            if (wec)
              return self->report(false, "tcp send to " + self->server + ": " + lower_first(wec.message()));
            self->read_tcp_length();
          });
    });
  }

  void read_tcp_length() {
    asio::async_read(tcp_socket, asio::buffer(buffer.data(), 2),
                     [self = shared_from_this()](boost::system::error_code ec, size_t) {
                       if (ec == asio::error::operation_aborted) return;
                       if (ec) return self->tcp_failed(ec);
                       const size_t length = static_cast<size_t>(self->buffer[0]) << 8 | self->buffer[1];
                       self->tcp_answer.resize(length);
                       asio::async_read(self->tcp_socket, asio::buffer(self->tcp_answer),
                                        [self](boost::system::error_code rec, size_t) {
                                          if (rec == asio::error::operation_aborted) return;
                                          if (rec) return self->tcp_failed(rec);
                                          self->answered(self->tcp_answer, /*over_tcp=*/true);
                                        });
                     });
  }

  void tcp_failed(boost::system::error_code ec) {
    report(false, "tcp answer from " + server + ": " + lower_first(ec.message()));
  }

  void answered(std::span<const uint8_t> message, bool over_tcp) {
    auto decoded = decode_dns_response(message);
    if (!decoded) return report(false, "malformed answer from " + server + ": " + decoded.error().message);
    const DnsResponse& response = *decoded;
    if (response.id != id) {
      return report(false, "answer from " + server + " has id " + std::to_string(response.id) +
                               ", not the query's " + std::to_string(id));
    }
    const bool same_question =
        response.questions.size() == 1 &&
        response.questions[0].type == static_cast<uint16_t>(spec().record) &&
        std::equal(response.questions[0].name.begin(), response.questions[0].name.end(), spec().name.begin(),
                   spec().name.end(), [](char a, char b) {
                     return std::tolower(static_cast<unsigned char>(a)) ==
                            std::tolower(static_cast<unsigned char>(b));
                   });
    if (!same_question && response.rcode == 0) {
      return report(false, "answer from " + server + " is not for the question asked");
    }
    if (response.truncated && !over_tcp) return retry_over_tcp();
    const double elapsed =
        std::chrono::duration<double, std::milli>(clock.monotonic_time() - started).count();
    DnsVerdict verdict = judge_dns_response(spec(), response, elapsed);
    result.body_excerpt = verdict.body.substr(0, kBodyExcerptBytes);
    report(verdict.ok, std::move(verdict.cause));
  }

  void report(bool ok, std::string cause) {
    if (finished) return;
    finished = true;
    timer.cancel();
    boost::system::error_code ignored;
    udp_socket.close(ignored);
    tcp_socket.close(ignored);
    result.ok = ok;
    result.cause = std::move(cause);
    result.latency_ms = std::chrono::duration<double, std::milli>(clock.monotonic_time() - started).count();
    result.timings.total_ms = result.latency_ms;
    asio::post(timer.get_executor(),
               [d = std::move(done), r = std::move(result)]() mutable { d(std::move(r)); });
  }

  udp::socket udp_socket;
  tcp::socket tcp_socket;
  asio::steady_timer timer;
  std::shared_ptr<const MonitorConfig> monitor;
  CheckDone done;
  CheckResult result;
  MonoTime started;
  bool finished = false;
  const Clock& clock;
  uint16_t id;
  asio::ip::address address;
  uint16_t resolver_port = 53;
  std::string server = "the resolver";
  std::vector<uint8_t> query;
  std::array<uint8_t, DnsChecker::kMaxUdpAnswerBytes> buffer{};
  std::vector<uint8_t> tcp_answer;
};

}  // namespace

void DnsChecker::check(std::shared_ptr<const MonitorConfig> monitor, CheckDone done) {
  std::array<uint8_t, 2> id_bytes{};
  random_.fill(id_bytes);
  const auto id = static_cast<uint16_t>(id_bytes[0] << 8 | id_bytes[1]);
  auto query = std::make_shared<Query>(io_, clock_, std::move(monitor), std::move(done), id);
  asio::post(io_, [query] { query->start(); });
}

}  // namespace trainwatch::checks
