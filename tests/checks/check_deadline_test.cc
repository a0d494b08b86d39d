// Every network checker's timeout, in simulated time. Each checker meets a loopback peer
// that never answers (tests/checks/silent_peers.h) and the monitor's deadline is reached by
// ManualClock::advance, never by sleeping; the io_context is run in short slices between
// the steps. One typed suite, so that the checkers, which share CheckAttempt, are held to
// the same contract: one `done`, not before the deadline, never from inside the deadline's
// callback, and the socket given back when the deadline ends the check.
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "checks/checker.h"
#include "checks/dns_checker.h"
#include "checks/icmp_checker.h"
#include "checks/plain_http_checker.h"
#include "checks/silent_peers.h"
#include "checks/tcp_checker.h"
#include "checks/tls_checker.h"
#include "core/random.h"
#include "fakes/manual_clock.h"

namespace trainwatch::checks {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using testing::FullBacklogListener;
using testing::open_descriptors;
using testing::SilentListener;
using testing::SilentUdpPeer;
using trainwatch::testing::ManualClock;

// Not a whole number of seconds: a cause names the timeout as the config wrote it
// ("timeout after 1500ms", not "1s").
constexpr Millis kTimeout{1'500};

template <typename Spec>
MonitorConfig monitor_with(Spec spec) {
  MonitorConfig monitor;
  monitor.name = "target";
  monitor.timeout = kTimeout;
  monitor.spec = std::move(spec);
  return monitor;
}

// What a checker needs besides its peer.
struct Wiring {
  asio::io_context& io;
  ManualClock& clock;
  Random& random;
};

// --- the targets: a checker and the peer it waits on ------------------------------------------
// Each says when the checker waits on its peer, how the peer answers at last, whether the
// checker let go of its socket, and the cause its deadline gives.

class TcpTarget {
 public:
  explicit TcpTarget(Wiring w) : checker_(w.io, w.clock, w.clock) {}
  Checker& checker() { return checker_; }
  MonitorConfig monitor() const {
    TcpCheckSpec spec;
    spec.host = "127.0.0.1";
    spec.port = peer_.port();
    return monitor_with(spec);
  }
  bool waiting() const { return peer_.syns_waiting() == 1; }
  void answer() { peer_.make_room(); }
  bool answer_arrived() { return peer_.another_connected(); }  // its SYN, retransmitted, got in
  bool released() const { return peer_.syns_waiting() == 0; }
  size_t peer_descriptors() const { return peer_.descriptors_accepted(); }
  static std::string timeout_cause() { return "timeout after 1500ms"; }
  static bool can_stay_silent() { return true; }

 private:
  FullBacklogListener peer_;
  TcpChecker checker_;
};

// The plain client hands a check it cannot make to its fallback; these checks it can make.
class NoFallback final : public Checker {
 public:
  void check(std::shared_ptr<const MonitorConfig>, CheckDone) override {
    ADD_FAILURE() << "a plain http:// check was handed to the fallback";
  }
};

class PlainHttpTarget {
 public:
  explicit PlainHttpTarget(Wiring w) : checker_(w.io, w.clock, w.clock, fallback_) {}
  Checker& checker() { return checker_; }
  MonitorConfig monitor() const {
    HttpCheckSpec spec;
    spec.url = "http://127.0.0.1:" + std::to_string(peer_.port()) + "/";
    return monitor_with(spec);
  }
  bool waiting() { return peer_.received_bytes(); }  // the request came
  void answer() { peer_.send("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"); }
  void answer_headers_only() { peer_.send("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nthe start"); }
  static bool answer_arrived() { return true; }  // loopback: in the client's buffer already
  bool released() { return peer_.peer_closed(); }
  size_t peer_descriptors() const { return peer_.descriptors_accepted(); }
  static std::string timeout_cause() { return "timeout after 1500ms"; }
  static bool can_stay_silent() { return true; }

 private:
  SilentListener peer_;
  NoFallback fallback_;
  PlainHttpChecker checker_;
};

class TlsTarget {
 public:
  explicit TlsTarget(Wiring w) : checker_(w.io, w.clock, w.clock) {}
  Checker& checker() { return checker_; }
  MonitorConfig monitor() const {
    TlsCheckSpec spec;
    spec.host = "127.0.0.1";
    spec.port = peer_.port();
    return monitor_with(spec);
  }
  bool waiting() { return peer_.received_bytes(); }  // the ClientHello came; no ServerHello follows
  void answer() { peer_.hang_up(); }
  static bool answer_arrived() { return true; }
  bool released() { return peer_.peer_closed(); }
  size_t peer_descriptors() const { return peer_.descriptors_accepted(); }
  static std::string timeout_cause() { return "timeout after 1500ms"; }
  static bool can_stay_silent() { return true; }

 private:
  SilentListener peer_;
  TlsChecker checker_;
};

class DnsTarget {
 public:
  explicit DnsTarget(Wiring w) : checker_(w.io, w.clock, w.clock, w.random) {}
  Checker& checker() { return checker_; }
  MonitorConfig monitor() const {
    DnsCheckSpec spec;
    spec.name = "trainer.internal";
    spec.resolver_host = "127.0.0.1";
    spec.resolver_port = peer_.port();
    return monitor_with(spec);
  }
  bool waiting() { return peer_.received_datagram(); }  // the question came
  void answer() { peer_.answer("not a dns message"); }
  static bool answer_arrived() { return true; }
  bool released() const { return peer_.sender_released(); }
  static size_t peer_descriptors() { return 0; }
  std::string timeout_cause() const {
    return "no answer from 127.0.0.1:" + std::to_string(peer_.port()) + " within 1500ms";
  }
  static bool can_stay_silent() { return true; }

 private:
  SilentUdpPeer peer_;
  DnsChecker checker_;
};

// Loopback answers every echo request itself, so no ICMP peer here stays silent: the
// deadline is tested racing replies the kernel already delivered and the round has not
// read yet. An icmp monitor's deadline is a verdict on what came back, not a timeout.
class IcmpTarget {
 public:
  explicit IcmpTarget(Wiring w) : checker_(w.io, w.clock, w.clock, w.random) {}
  Checker& checker() { return checker_; }
  static MonitorConfig monitor() {
    IcmpCheckSpec spec;
    spec.host = "127.0.0.1";
    spec.count = 1;
    return monitor_with(spec);
  }
  bool waiting() const { return open_descriptors() > before_; }  // the round opened its socket and sent
  static void answer() {}                                        // the kernel did
  static bool answer_arrived() { return true; }
  static bool released() { return true; }  // the descriptor count says it
  static size_t peer_descriptors() { return 0; }
  static std::string timeout_cause() { return "no echo reply from 127.0.0.1 (1 sent)"; }
  static bool can_stay_silent() { return false; }

 private:
  size_t before_ = open_descriptors();
  IcmpChecker checker_;
};

// Whether this process may send ICMP echo requests at all (a datagram or a raw socket).
bool may_ping() {
  for (int type : {SOCK_DGRAM, SOCK_RAW}) {
    const int fd = ::socket(AF_INET, type | SOCK_CLOEXEC, IPPROTO_ICMP);
    if (fd >= 0) {
      ::close(fd);
      return true;
    }
  }
  return false;
}

// --- the suite --------------------------------------------------------------------------------

template <typename Target>
class CheckDeadline : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::is_same_v<Target, IcmpTarget> && !may_ping())
      GTEST_SKIP() << "neither an ICMP datagram nor a raw socket is permitted here";
  }

  void check() {
    target_.checker().check(std::make_shared<const MonitorConfig>(target_.monitor()),
                            [this](CheckResult result) { results_.push_back(std::move(result)); });
  }

  // Runs the io_context one handler at a time until `reached` holds; false if it did not
  // within a few real seconds (a bound on the test, not the check's deadline).
  bool run_until(const std::function<bool()>& reached) {
    const auto give_up = std::chrono::steady_clock::now() + 5s;
    while (!reached()) {
      if (std::chrono::steady_clock::now() > give_up) return false;
      io_.restart();
      if (io_.poll_one() == 0) std::this_thread::sleep_for(1ms);
    }
    return true;
  }

  // Gives the io_context a few short slices: whatever can complete, completes.
  void run_a_while() {
    for (int slice = 0; slice < 10; ++slice) {
      io_.restart();
      io_.run_for(2ms);
    }
  }

  asio::io_context io_;
  // Built first, so that the io_context's own descriptors (epoll, eventfd, timerfd) are
  // open before any count of descriptors is taken.
  asio::ip::tcp::socket reactor_started_{io_};
  ManualClock clock_;
  SystemRandom random_;
  Target target_{Wiring{io_, clock_, random_}};
  std::vector<CheckResult> results_;
};

using Targets = ::testing::Types<TcpTarget, PlainHttpTarget, TlsTarget, DnsTarget, IcmpTarget>;

class TargetNames {
 public:
  template <typename T>
  static std::string GetName(int) {  // NOLINT(readability-identifier-naming): gtest's name
    if (std::is_same_v<T, TcpTarget>) return "Tcp";
    if (std::is_same_v<T, PlainHttpTarget>) return "PlainHttp";
    if (std::is_same_v<T, TlsTarget>) return "Tls";
    if (std::is_same_v<T, DnsTarget>) return "Dns";
    return "Icmp";
  }
};

TYPED_TEST_SUITE(CheckDeadline, Targets, TargetNames);

TYPED_TEST(CheckDeadline, ASilentPeerFailsTheCheckAtTheDeadlineAndItsSocketIsClosed) {
  if (!TypeParam::can_stay_silent()) GTEST_SKIP() << "loopback answers every echo request";
  const size_t before = open_descriptors();
  this->check();
  ASSERT_TRUE(this->run_until([this] { return this->target_.waiting(); }))
      << "the check never reached its peer";

  this->clock_.advance(kTimeout - 1ms);
  this->run_a_while();
  EXPECT_TRUE(this->results_.empty()) << "done before the deadline: " << this->results_[0].cause;

  this->clock_.advance(1ms);
  EXPECT_TRUE(this->results_.empty()) << "done must run from the io_context, not the deadline's callback";
  this->run_a_while();
  ASSERT_EQ(this->results_.size(), 1u);
  const CheckResult& result = this->results_[0];
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.cause, this->target_.timeout_cause());
  EXPECT_DOUBLE_EQ(result.latency_ms,
                   static_cast<double>(kTimeout.count()));  // measured on the injected clock
  EXPECT_DOUBLE_EQ(result.timings.total_ms, static_cast<double>(kTimeout.count()));

  EXPECT_TRUE(this->target_.released()) << "the checker kept its connection to the peer";
  EXPECT_EQ(open_descriptors(), before + this->target_.peer_descriptors())
      << "the checker kept a descriptor open";

  this->clock_.advance(kTimeout * 10);
  this->run_a_while();
  EXPECT_EQ(this->results_.size(), 1u);
}

// The peer answers, but the deadline fires before the io_context runs the completion: the
// check reports the timeout once, and the completion that runs after finds it finished.
TYPED_TEST(CheckDeadline, ACompletionQueuedBehindTheDeadlineIsIgnored) {
  const size_t before = open_descriptors();
  this->check();
  ASSERT_TRUE(this->run_until([this] { return this->target_.waiting(); }))
      << "the check never reached its peer";
  this->target_.answer();
  const auto give_up = std::chrono::steady_clock::now() + 5s;  // a retransmitted SYN takes a second
  while (!this->target_.answer_arrived() && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(5ms);

  this->clock_.advance(kTimeout);
  this->run_a_while();
  ASSERT_EQ(this->results_.size(), 1u);
  EXPECT_FALSE(this->results_[0].ok);
  EXPECT_EQ(this->results_[0].cause, this->target_.timeout_cause());
  EXPECT_EQ(open_descriptors(), before + this->target_.peer_descriptors())
      << "the checker kept a descriptor open";
}

// The other order: the answer is read first, so the deadline that passes later is disarmed.
TYPED_TEST(CheckDeadline, AnAnswerBeforeTheDeadlineReportsOnceAndDisarmsIt) {
  this->check();
  bool answered = false;
  ASSERT_TRUE(this->run_until([&] {
    if (!answered && this->target_.waiting()) {
      this->target_.answer();
      answered = true;
    }
    return !this->results_.empty();
  })) << "no result without the deadline";
  EXPECT_NE(this->results_[0].cause, this->target_.timeout_cause());
  EXPECT_EQ(this->clock_.armed_timers(), 0u);

  this->clock_.advance(kTimeout * 10);
  this->run_a_while();
  EXPECT_EQ(this->results_.size(), 1u);
}

// A deadline that passes in the body still reports the status whose headers came, as any
// failure of the plain client does.
using PlainHttpDeadline = CheckDeadline<PlainHttpTarget>;

TEST_F(PlainHttpDeadline, ATimeoutInTheBodyKeepsTheStatus) {
  check();
  ASSERT_TRUE(run_until([this] { return target_.waiting(); }));
  target_.answer_headers_only();
  run_a_while();
  EXPECT_TRUE(results_.empty());
  clock_.advance(kTimeout);
  run_a_while();
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_EQ(results_[0].cause, "timeout after 1500ms");
  EXPECT_EQ(results_[0].http_status, 200);
}

}  // namespace
}  // namespace trainwatch::checks
