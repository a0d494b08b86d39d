#include "checks/icmp_checker.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include <boost/asio/ip/icmp.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/steady_timer.hpp>

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

// One round of echo requests. Whichever comes first, the last reply or the timer,
// reports; the other sees `finished` and does nothing.
struct Round : std::enable_shared_from_this<Round> {
  Round(asio::io_context& io, const Clock& c, std::shared_ptr<const MonitorConfig> m, CheckDone d)
      : resolver(io), socket(io), timer(io), monitor(std::move(m)), done(std::move(d)), clock(c) {
    result.at = clock.system_time();
    started = clock.monotonic_time();
  }

  const IcmpCheckSpec& spec() const { return std::get<IcmpCheckSpec>(monitor->spec); }

  void start() {
    timer.expires_after(monitor->timeout);
    timer.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (!ec) self->finish();
    });
    boost::system::error_code ec;
    auto address = asio::ip::make_address(spec().host, ec);
    if (!ec) return send(address);
    resolver.async_resolve(spec().host, "",
                           [self = shared_from_this()](boost::system::error_code rec,
                                                       const asio::ip::udp::resolver::results_type& found) {
                             if (rec == asio::error::operation_aborted) return;
                             if (rec || found.empty()) {
                               return self->report(false,
                                                   "cannot resolve " + self->spec().host + ": " +
                                                       lower_first(rec ? rec.message() : "no address"));
                             }
                             self->send(found.begin()->endpoint().address());
                           });
  }

  void send(const asio::ip::address& address) {
    target = address;
    target_text = address.to_string();
    const bool v6 = address.is_v6();
    family = v6 ? IcmpFamily::kV6 : IcmpFamily::kV4;
    OpenedSocket opened = open_icmp_socket(spec().socket, v6);
    if (opened.fd < 0) return report(false, opened.error);
    raw = opened.raw;
    boost::system::error_code ec;
    socket.assign(v6 ? icmp::v6() : icmp::v4(), opened.fd, ec);
    if (ec) {
      ::close(opened.fd);
      return report(false, "icmp socket: " + lower_first(ec.message()));
    }
    const auto count = static_cast<size_t>(spec().count);
    sent_at.resize(count);
    replied.assign(count, false);
    const icmp::endpoint to(address, 0);
    std::string send_error;
    for (size_t seq = 0; seq < count; ++seq) {
      const auto packet = build_echo_request(family, identifier, static_cast<uint16_t>(seq), nonce);
      sent_at[seq] = clock.monotonic_time();
      socket.send_to(asio::buffer(packet), to, 0, ec);
      if (ec) {
        send_error = lower_first(ec.message());
        break;
      }
      ++sent;
    }
    if (sent == 0) return report(false, "cannot send to " + target_text + ": " + send_error);
    receive();
  }

  void receive() {
    socket.async_receive_from(
        asio::buffer(buffer), sender, [self = shared_from_this()](boost::system::error_code ec, size_t n) {
          if (ec == asio::error::operation_aborted || self->finished) return;
          if (ec)
            return self->report(false,
                                "receive from " + self->target_text + ": " + lower_first(ec.message()));
          self->take(std::span<const uint8_t>(self->buffer.data(), n));
          if (self->received == self->sent) return self->finish();
          self->receive();
        });
  }

  void take(std::span<const uint8_t> packet) {
    const bool with_ip_header = raw && family == IcmpFamily::kV4;
    auto reply = parse_echo_reply(family, packet, with_ip_header);
    if (!reply || sender.address() != target) return;
    // On a datagram socket the kernel chose the identifier and delivers only replies to it.
    if (raw && reply->identifier != identifier) return;
    if (reply->sequence >= sent || replied[reply->sequence]) return;
    if (!std::equal(reply->payload.begin(), reply->payload.end(), nonce.begin(), nonce.end())) return;
    replied[reply->sequence] = true;
    ++received;
    rtt_sum_ms +=
        std::chrono::duration<double, std::milli>(clock.monotonic_time() - sent_at[reply->sequence]).count();
  }

  void finish() {
    if (finished) return;
    EchoRound echo{static_cast<int>(sent), static_cast<int>(received), received ? rtt_sum_ms / received : 0};
    if (sent == 0) {
      return report(false,
                    "cannot resolve " + spec().host + ": timeout after " + format_duration(monitor->timeout));
    }
    IcmpVerdict verdict = judge_echo_round(spec(), target_text, echo);
    result.body_excerpt = std::to_string(echo.sent) + " sent, " + std::to_string(echo.received) + " received";
    report(verdict.ok, std::move(verdict.cause), echo.average_rtt_ms);
  }

  void report(bool ok, std::string cause, double rtt_ms = -1) {
    if (finished) return;
    finished = true;
    timer.cancel();
    resolver.cancel();
    boost::system::error_code ignored;
    socket.close(ignored);
    result.ok = ok;
    result.cause = std::move(cause);
    result.timings.total_ms =
        std::chrono::duration<double, std::milli>(clock.monotonic_time() - started).count();
    // An icmp monitor's latency is the round trip of its packets, not the check's length.
    result.latency_ms = rtt_ms >= 0 ? rtt_ms : result.timings.total_ms;
    asio::post(timer.get_executor(),
               [d = std::move(done), r = std::move(result)]() mutable { d(std::move(r)); });
  }

  asio::ip::udp::resolver resolver;
  icmp::socket socket;
  asio::steady_timer timer;
  std::shared_ptr<const MonitorConfig> monitor;
  CheckDone done;
  CheckResult result;
  MonoTime started;
  bool finished = false;
  const Clock& clock;
  uint16_t identifier = 0;
  std::array<uint8_t, kNonceBytes> nonce{};
  asio::ip::address target;
  std::string target_text;
  IcmpFamily family = IcmpFamily::kV4;
  bool raw = false;
  size_t sent = 0;
  size_t received = 0;
  double rtt_sum_ms = 0;
  std::vector<MonoTime> sent_at;
  std::vector<bool> replied;
  icmp::endpoint sender;
  std::array<uint8_t, IcmpChecker::kMaxPacketBytes> buffer{};
};

}  // namespace

void IcmpChecker::check(std::shared_ptr<const MonitorConfig> monitor, CheckDone done) {
  auto round = std::make_shared<Round>(io_, clock_, std::move(monitor), std::move(done));
  std::array<uint8_t, 2> id{};
  random_.fill(id);
  round->identifier = static_cast<uint16_t>(id[0] << 8 | id[1]);
  random_.fill(round->nonce);
  asio::post(io_, [round] { round->start(); });
}

}  // namespace trainwatch::checks
