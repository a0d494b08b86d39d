#include "checks/dns_checker.h"

#include <array>
#include <fstream>
#include <sstream>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include "checks/check_attempt.h"
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

// One question asked: over UDP, and again over TCP when the answer comes back truncated.
class Query final : public CheckAttempt {
 public:
  Query(asio::io_context& io, const Clock& clock, TimerFactory& timers,
        std::shared_ptr<const MonitorConfig> monitor, CheckDone done, uint16_t query_id)
      : CheckAttempt(io, clock, timers, std::move(monitor), std::move(done)),
        udp_socket_(io),
        tcp_socket_(io),
        id_(query_id) {}

 private:
  const DnsCheckSpec& spec() const { return std::get<DnsCheckSpec>(monitor().spec); }

  void on_deadline() override {
    report(false, "no answer from " + server_ + " within " + format_duration_config(monitor().timeout));
  }

  void begin() override {
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
    address_ = asio::ip::make_address(host, ec);
    if (ec) return report(false, "resolver '" + host + "' is not an IP address");
    resolver_port_ = port;
    server_ = endpoint_text(address_, port);
    auto encoded = encode_dns_query(id_, spec().name, static_cast<uint16_t>(spec().record));
    if (!encoded) return report(false, encoded.error().message);
    query_ = std::move(*encoded);

    // Connected, so an ICMP port unreachable comes back as "connection refused" and only
    // the resolver's own datagrams are read.
    udp_socket_.open(address_.is_v6() ? udp::v6() : udp::v4(), ec);
    if (!ec) udp_socket_.connect(udp::endpoint(address_, port), ec);
    if (ec) return report(false, "udp socket to " + server_ + ": " + lower_first(ec.message()));
    udp_socket_.async_send(
        asio::buffer(query_), [self = self_as<Query>()](boost::system::error_code sec, size_t) {
          if (self->finished()) return;
          if (sec) return self->report(false, "send to " + self->server_ + ": " + lower_first(sec.message()));
          self->receive_udp();
        });
  }

  void receive_udp() {
    udp_socket_.async_receive(
        asio::buffer(buffer_), [self = self_as<Query>()](boost::system::error_code ec, size_t n) {
          if (self->finished()) return;
          if (ec == asio::error::connection_refused) {
            return self->report(
                false, "connection refused by " + self->server_ + " (nothing listens on that UDP port)");
          }
          if (ec)
            return self->report(false, "receive from " + self->server_ + ": " + lower_first(ec.message()));
          self->answered(std::span<const uint8_t>(self->buffer_.data(), n), /*over_tcp=*/false);
        });
  }

  // The answer did not fit a datagram: ask again over TCP, each message behind its
  // two-byte length (RFC 1035 section 4.2.2).
  void retry_over_tcp() {
    const uint16_t size = static_cast<uint16_t>(query_.size());
    query_.insert(query_.begin(), {static_cast<uint8_t>(size >> 8), static_cast<uint8_t>(size & 0xFF)});
    tcp_socket_.async_connect(tcp::endpoint(address_, resolver_port_), [self = self_as<Query>()](
                                                                           boost::system::error_code ec) {
      if (self->finished()) return;
      if (ec)
        return self->report(
            false, "truncated answer, and tcp to " + self->server_ + ": " + lower_first(ec.message()));
      asio::async_write(
          self->tcp_socket_, asio::buffer(self->query_), [self](boost::system::error_code wec, size_t) {
            if (self->finished()) return;
            if (wec)
              return self->report(false, "tcp send to " + self->server_ + ": " + lower_first(wec.message()));
            self->read_tcp_length();
          });
    });
  }

  void read_tcp_length() {
    asio::async_read(tcp_socket_, asio::buffer(buffer_.data(), 2),
                     [self = self_as<Query>()](boost::system::error_code ec, size_t) {
                       if (self->finished()) return;
                       if (ec) return self->tcp_failed(ec);
                       const size_t length = static_cast<size_t>(self->buffer_[0]) << 8 | self->buffer_[1];
                       self->tcp_answer_.resize(length);
                       asio::async_read(self->tcp_socket_, asio::buffer(self->tcp_answer_),
                                        [self](boost::system::error_code rec, size_t) {
                                          if (self->finished()) return;
                                          if (rec) return self->tcp_failed(rec);
                                          self->answered(self->tcp_answer_, /*over_tcp=*/true);
                                        });
                     });
  }

  void tcp_failed(boost::system::error_code ec) {
    report(false, "tcp answer from " + server_ + ": " + lower_first(ec.message()));
  }

  void answered(std::span<const uint8_t> message, bool over_tcp) {
    auto decoded = decode_dns_response(message);
    if (!decoded) return report(false, "malformed answer from " + server_ + ": " + decoded.error().message);
    const DnsResponse& response = *decoded;
    if (response.id != id_) {
      return report(false, "answer from " + server_ + " has id " + std::to_string(response.id) +
                               ", not the query's " + std::to_string(id_));
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
      return report(false, "answer from " + server_ + " is not for the question asked");
    }
    if (response.truncated && !over_tcp) return retry_over_tcp();
    DnsVerdict verdict = judge_dns_response(spec(), response, elapsed_ms());
    result().body_excerpt = verdict.body.substr(0, kBodyExcerptBytes);
    report(verdict.ok, std::move(verdict.cause));
  }

  void cancel_io() override {
    boost::system::error_code ignored;
    udp_socket_.close(ignored);
    tcp_socket_.close(ignored);
  }

  udp::socket udp_socket_;
  tcp::socket tcp_socket_;
  uint16_t id_;
  asio::ip::address address_;
  uint16_t resolver_port_ = 53;
  std::string server_ = "the resolver";
  std::vector<uint8_t> query_;
  std::array<uint8_t, DnsChecker::kMaxUdpAnswerBytes> buffer_{};
  std::vector<uint8_t> tcp_answer_;
};

}  // namespace

void DnsChecker::check(std::shared_ptr<const MonitorConfig> monitor, CheckDone done) {
  std::array<uint8_t, 2> id_bytes{};
  random_.fill(id_bytes);
  const auto id = static_cast<uint16_t>(id_bytes[0] << 8 | id_bytes[1]);
  auto query = std::make_shared<Query>(io_, clock_, timers_, std::move(monitor), std::move(done), id);
  asio::post(io_, [query] { query->start(); });
}

}  // namespace trainwatch::checks
