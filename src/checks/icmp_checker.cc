#include "checks/icmp_checker.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <optional>

#include <boost/asio/ip/icmp.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/post.hpp>

#include "checks/check_attempt.h"
#include "checks/icmp_packet.h"
#include "checks/icmp_verdict.h"
#include "core/cause_text.h"
#include "core/duration.h"

namespace trainwatch::checks {
namespace {

namespace asio = boost::asio;
using icmp = asio::ip::icmp;  // NOLINT(readability-identifier-naming): asio's protocol keeps its name

constexpr size_t kNonceBytes = 8;

struct OpenedSocket {
  int fd = -1;
  bool raw = false;
  std::string error;  // when fd < 0
};

bool denied(int error) { return error == EACCES || error == EPERM; }

// Opens the kind of socket the spec asks for; `auto` prefers the one that needs no privilege.
OpenedSocket open_icmp_socket(IcmpSocket kind, bool v6) {
  const int family = v6 ? AF_INET6 : AF_INET;
  const int protocol = v6 ? static_cast<int>(IPPROTO_ICMPV6) : static_cast<int>(IPPROTO_ICMP);
  auto open = [&](int type) { return ::socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, protocol); };
  int datagram_error = 0;
  if (kind != IcmpSocket::kRaw) {
    if (int fd = open(SOCK_DGRAM); fd >= 0) return {fd, false, {}};
    datagram_error = errno;
    if (kind == IcmpSocket::kDatagram) {
      if (denied(datagram_error)) {
        return {-1, false,
                "ICMP datagram socket not permitted: add the server's group to net.ipv4.ping_group_range"};
      }
      return {-1, false, "icmp datagram socket: " + lower_first(std::strerror(datagram_error))};
    }
  }
  if (int fd = open(SOCK_RAW); fd >= 0) return {fd, true, {}};
  const int raw_error = errno;
  if (denied(raw_error) && (kind == IcmpSocket::kRaw || denied(datagram_error))) {
    return {-1, true,
            kind == IcmpSocket::kRaw
                ? "raw ICMP socket not permitted: grant CAP_NET_RAW or run as root"
                : "ICMP not permitted: set net.ipv4.ping_group_range or grant CAP_NET_RAW"};
  }
  return {-1, true,
          "icmp socket: " + lower_first(std::strerror(denied(raw_error) ? datagram_error : raw_error))};
}

// One round of echo requests. It ends with the last reply, or with what came back when
// the monitor's timeout passes first: for an icmp monitor that is a verdict, not a timeout.
class Round final : public CheckAttempt {
 public:
  Round(asio::io_context& io, const Clock& clock, TimerFactory& timers,
        std::shared_ptr<const MonitorConfig> monitor, CheckDone done, uint16_t identifier,
        std::array<uint8_t, kNonceBytes> nonce)
      : CheckAttempt(io, clock, timers, std::move(monitor), std::move(done)),
        resolver_(io),
        socket_(io),
        identifier_(identifier),
        nonce_(nonce) {}

 private:
  const IcmpCheckSpec& spec() const { return std::get<IcmpCheckSpec>(monitor().spec); }

  void on_deadline() override { conclude(); }

  void begin() override {
    boost::system::error_code ec;
    auto address = asio::ip::make_address(spec().host, ec);
    if (!ec) return send(address);
    resolver_.async_resolve(spec().host, "",
                            [self = self_as<Round>()](boost::system::error_code rec,
                                                      const asio::ip::udp::resolver::results_type& found) {
                              if (self->finished()) return;
                              if (rec || found.empty()) {
                                return self->report(false,
                                                    "cannot resolve " + self->spec().host + ": " +
                                                        lower_first(rec ? rec.message() : "no address"));
                              }
                              self->send(found.begin()->endpoint().address());
                            });
  }

  void send(const asio::ip::address& address) {
    target_ = address;
    target_text_ = address.to_string();
    const bool v6 = address.is_v6();
    family_ = v6 ? IcmpFamily::kV6 : IcmpFamily::kV4;
    OpenedSocket opened = open_icmp_socket(spec().socket, v6);
    if (opened.fd < 0) return report(false, opened.error);
    raw_ = opened.raw;
    boost::system::error_code ec;
    socket_.assign(v6 ? icmp::v6() : icmp::v4(), opened.fd, ec);
    if (ec) {
      ::close(opened.fd);
      return report(false, "icmp socket: " + lower_first(ec.message()));
    }
    const auto count = static_cast<size_t>(spec().count);
    sent_at_.resize(count);
    replied_.assign(count, false);
    const icmp::endpoint to(address, 0);
    std::string send_error;
    for (size_t seq = 0; seq < count; ++seq) {
      const auto packet = build_echo_request(family_, identifier_, static_cast<uint16_t>(seq), nonce_);
      sent_at_[seq] = clock().monotonic_time();
      socket_.send_to(asio::buffer(packet), to, 0, ec);
      if (ec) {
        send_error = lower_first(ec.message());
        break;
      }
      ++sent_;
    }
    if (sent_ == 0) return report(false, "cannot send to " + target_text_ + ": " + send_error);
    receive();
  }

  void receive() {
    socket_.async_receive_from(
        asio::buffer(buffer_), sender_, [self = self_as<Round>()](boost::system::error_code ec, size_t n) {
          if (self->finished()) return;
          if (ec)
            return self->report(false,
                                "receive from " + self->target_text_ + ": " + lower_first(ec.message()));
          self->take(std::span<const uint8_t>(self->buffer_.data(), n));
          if (self->received_ == self->sent_) return self->conclude();
          self->receive();
        });
  }

  void take(std::span<const uint8_t> packet) {
    const bool with_ip_header = raw_ && family_ == IcmpFamily::kV4;
    auto reply = parse_echo_reply(family_, packet, with_ip_header);
    if (!reply || sender_.address() != target_) return;
    // On a datagram socket the kernel chose the identifier and delivers only replies to it.
    if (raw_ && reply->identifier != identifier_) return;
    if (reply->sequence >= sent_ || replied_[reply->sequence]) return;
    if (!std::equal(reply->payload.begin(), reply->payload.end(), nonce_.begin(), nonce_.end())) return;
    replied_[reply->sequence] = true;
    ++received_;
    rtt_sum_ms_ +=
        std::chrono::duration<double, std::milli>(clock().monotonic_time() - sent_at_[reply->sequence])
            .count();
  }

  // The round's verdict from the replies that came back.
  void conclude() {
    if (finished()) return;
    if (sent_ == 0) {
      return report(false, "cannot resolve " + spec().host + ": timeout after " +
                               format_duration_config(monitor().timeout));
    }
    EchoRound echo{static_cast<int>(sent_), static_cast<int>(received_),
                   received_ ? rtt_sum_ms_ / received_ : 0};
    IcmpVerdict verdict = judge_echo_round(spec(), target_text_, echo);
    result().body_excerpt =
        std::to_string(echo.sent) + " sent, " + std::to_string(echo.received) + " received";
    average_rtt_ms_ = echo.average_rtt_ms;
    report(verdict.ok, std::move(verdict.cause));
  }

  void cancel_io() override {
    resolver_.cancel();
    boost::system::error_code ignored;
    socket_.close(ignored);
  }

  // An icmp monitor's latency is the round trip of its packets, not the check's length.
  void record_latency(double elapsed_ms) override {
    CheckAttempt::record_latency(elapsed_ms);
    if (average_rtt_ms_) result().latency_ms = *average_rtt_ms_;
  }

  asio::ip::udp::resolver resolver_;
  icmp::socket socket_;
  uint16_t identifier_;
  std::array<uint8_t, kNonceBytes> nonce_;
  asio::ip::address target_;
  std::string target_text_;
  IcmpFamily family_ = IcmpFamily::kV4;
  bool raw_ = false;
  size_t sent_ = 0;
  size_t received_ = 0;
  double rtt_sum_ms_ = 0;
  std::optional<double> average_rtt_ms_;  // set once a round was judged
  std::vector<MonoTime> sent_at_;
  std::vector<bool> replied_;
  icmp::endpoint sender_;
  std::array<uint8_t, IcmpChecker::kMaxPacketBytes> buffer_{};
};

}  // namespace

void IcmpChecker::check(std::shared_ptr<const MonitorConfig> monitor, CheckDone done) {
  std::array<uint8_t, 2> id{};
  random_.fill(id);
  std::array<uint8_t, kNonceBytes> nonce{};
  random_.fill(nonce);
  auto round = std::make_shared<Round>(io_, clock_, timers_, std::move(monitor), std::move(done),
                                       static_cast<uint16_t>(id[0] << 8 | id[1]), nonce);
  asio::post(io_, [round] { round->start(); });
}

}  // namespace trainwatch::checks
