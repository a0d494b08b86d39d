// The two clients of `type: http` monitors against one scripted server on loopback: the
// Beast client (PlainHttpChecker, every plain http:// check) and libcurl (CurlHttpChecker,
// TLS, credentials and redirects). The engine moves a monitor from one to the other (a
// redirect hands it to curl for good), so a user must see the same verdict from both: each
// case runs through both and asserts what each returned and that they agree on ok, cause,
// status and body excerpt. Latencies differ by design and are not compared.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <boost/asio/io_context.hpp>

#include "checks/curl_http_checker.h"
#include "checks/http_checker.h"
#include "checks/plain_http_checker.h"
#include "core/asio_timers.h"
#include "core/clock.h"

namespace trainwatch::checks {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

// How long a check may take before the test calls it hung; every case ends far sooner.
constexpr auto kCheckLimit = 5s;

bool same_name(std::string_view a, std::string_view b) {
  return std::ranges::equal(a, b, [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  });
}

// --- the scripted server --------------------------------------------------------------------

// One request as the server read it.
struct Recorded {
  std::string method;
  std::string target;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  std::vector<std::string> all(std::string_view name) const {
    std::vector<std::string> values;
    for (const auto& [n, v] : headers) {
      if (same_name(n, name)) values.push_back(v);
    }
    return values;
  }
  std::string header(std::string_view name) const {
    auto values = all(name);
    return values.empty() ? "" : values.front();
  }
};

// What the server does with a connection once it has read the request.
enum class Ending {
  kClose,  // sends `bytes`, then closes
  kHold,   // sends `bytes` and keeps the connection open until the server is destroyed
  kReset,  // sends `bytes`, then closes with SO_LINGER 0: an RST instead of a FIN
};

struct Reply {
  std::string bytes;
  Ending ending = Ending::kClose;
};

// A one-thread HTTP/1.1 server on 127.0.0.1, port 0: it serves connections one at a time,
// reads each request (headers, then Content-Length bytes of body), records it and answers
// with the bytes its script gives for it. Everything it does is bounded by socket timeouts,
// so a client that misbehaves fails its test instead of hanging it.
class ScriptedServer {
 public:
  using Script = std::function<Reply(const Recorded&)>;

  explicit ScriptedServer(const Reply& reply) : ScriptedServer([reply](const Recorded&) { return reply; }) {}
  explicit ScriptedServer(Script script) : script_(std::move(script)) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(listener_, 16) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      ADD_FAILURE() << "the scripted server could not listen";
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }

  ~ScriptedServer() {
    stop_ = true;
    ::shutdown(listener_, SHUT_RDWR);  // wakes the poll now rather than at its next timeout
    thread_.join();
    for (int fd : held_) ::close(fd);
    ::close(listener_);
  }

  ScriptedServer(const ScriptedServer&) = delete;
  ScriptedServer& operator=(const ScriptedServer&) = delete;

  uint16_t port() const { return port_; }
  std::string url(std::string_view path = "/") const {
    return "http://127.0.0.1:" + std::to_string(port_) + std::string(path);
  }

  std::vector<Recorded> requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  void serve() {
    while (!stop_) {
      pollfd ready{listener_, POLLIN, 0};
      if (::poll(&ready, 1, 20) != 1) continue;
      const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) answer(fd);
    }
  }

  void answer(int fd) {
    const timeval limit{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
    std::optional<Recorded> request = read_request(fd);
    if (!request) return (void)::close(fd);
    const Reply reply = script_(*request);
    {
      std::lock_guard lock(mutex_);
      requests_.push_back(std::move(*request));
    }
    for (size_t sent = 0; sent < reply.bytes.size();) {
      // MSG_NOSIGNAL: a client that stops reading (a body over the limit) closes on us.
      const ssize_t n = ::send(fd, reply.bytes.data() + sent, reply.bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
    }
    switch (reply.ending) {
      case Ending::kClose: ::close(fd); break;
      case Ending::kHold: held_.push_back(fd); break;
      case Ending::kReset: {
        const linger now{1, 0};
        ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &now, sizeof now);
        ::close(fd);
        break;
      }
    }
  }

  static std::optional<Recorded> read_request(int fd) {
    std::string data;
    auto read_more = [&] {
      char chunk[4096];
      const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
      if (n > 0) data.append(chunk, static_cast<size_t>(n));
      return n > 0;
    };
    size_t head_end = 0;
    while ((head_end = data.find("\r\n\r\n")) == std::string::npos) {
      if (!read_more()) return std::nullopt;
    }
    Recorded request;
    std::string_view head(data.data(), head_end);
    const size_t line_end = head.find("\r\n");
    const std::string_view first = head.substr(0, line_end);
    request.method = first.substr(0, first.find(' '));
    request.target = first.substr(request.method.size() + 1, first.rfind(' ') - request.method.size() - 1);
    for (size_t at = line_end; at != std::string_view::npos && at < head.size();) {
      const size_t next = head.find("\r\n", at + 2);
      const std::string_view line =
          head.substr(at + 2, next == std::string_view::npos ? next : next - at - 2);
      const size_t colon = line.find(':');
      std::string_view value = line.substr(colon + 1);
      while (value.starts_with(' ')) value.remove_prefix(1);
      request.headers.emplace_back(line.substr(0, colon), value);
      at = next;
    }
    const std::string length = request.header("Content-Length");
    const size_t body_bytes = length.empty() ? 0 : std::stoul(length);
    while (data.size() < head_end + 4 + body_bytes) {
      if (!read_more()) return std::nullopt;
    }
    request.body = data.substr(head_end + 4, body_bytes);
    return request;
  }

  Script script_;
  int listener_ = -1;
  uint16_t port_ = 0;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::vector<int> held_;  // touched by the server thread, then by the destructor after join
  mutable std::mutex mutex_;
  std::vector<Recorded> requests_;
};

std::string ok_with(std::string_view body) {
  return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
}

// --- the clients ----------------------------------------------------------------------------

using Factory = std::function<std::unique_ptr<Checker>(asio::io_context&, const Clock&, TimerFactory&)>;

// The Beast client as the server wires it: a redirect to follow goes to its own curl.
class PlainWithCurlForRedirects final : public Checker {
 public:
  PlainWithCurlForRedirects(asio::io_context& io, const Clock& clock, TimerFactory& timers)
      : curl_(io, clock), plain_(io, clock, timers, curl_) {}
  void check(std::shared_ptr<const MonitorConfig> monitor, CheckDone done) override {
    plain_.check(std::move(monitor), std::move(done));
  }

 private:
  CurlHttpChecker curl_;
  PlainHttpChecker plain_;
};

struct Client {
  std::string name;
  Factory make;
};

const std::vector<Client>& clients() {
  static const std::vector<Client> kAll = {
      {"plain (Beast)",
       [](asio::io_context& io, const Clock& clock, TimerFactory& timers) -> std::unique_ptr<Checker> {
         return std::make_unique<PlainWithCurlForRedirects>(io, clock, timers);
       }},
      {"curl",
       [](asio::io_context& io, const Clock& clock, TimerFactory&) -> std::unique_ptr<Checker> {
         return std::make_unique<CurlHttpChecker>(io, clock);  // curl_multi keeps its own timers
       }},
  };
  return kAll;
}

// One client on its own io_context, the real clock and asio timers, as the engine runs it. Members are
// destroyed client first, io_context last: nothing the client left queued outlives it.
class Runner {
 public:
  explicit Runner(const Factory& make) : client_(make(io_, clock_, timers_)) {}

  // The check's result, or nullopt (and a failed test) when none came within kCheckLimit.
  // `still_wanted`: asked as the check starts (CheckDone).
  std::optional<CheckResult> check(
      const MonitorConfig& monitor, std::function<bool()> still_wanted = [] { return true; }) {
    std::optional<CheckResult> result;
    client_->check(std::make_shared<const MonitorConfig>(monitor), CheckDone(
                                                                       [this, &result](CheckResult r) {
                                                                         result = std::move(r);
                                                                         // what the client left queued
                                                                         // runs at the next check, if any
                                                                         io_.stop();
                                                                       },
                                                                       std::move(still_wanted)));
    const auto give_up = std::chrono::steady_clock::now() + kCheckLimit;
    while (!result && std::chrono::steady_clock::now() < give_up) {
      io_.restart();
      io_.run_for(20ms);
    }
    if (!result) ADD_FAILURE() << "no result within " << kCheckLimit.count() << "s";
    return result;
  }

 private:
  asio::io_context io_;
  SystemClock clock_;
  AsioTimers timers_{io_, clock_};
  std::unique_ptr<Checker> client_;
};

MonitorConfig monitor_of(std::string url) {
  MonitorConfig monitor;
  monitor.name = "target";
  monitor.timeout = Millis{3'000};
  HttpCheckSpec spec;
  spec.url = std::move(url);
  monitor.spec = std::move(spec);
  return monitor;
}

HttpCheckSpec& spec_of(MonitorConfig& monitor) { return std::get<HttpCheckSpec>(monitor.spec); }

struct Outcome {
  std::string client;
  CheckResult result;
};

// The monitor checked once by each client, each on a fresh checker.
std::vector<Outcome> check_with_each(const MonitorConfig& monitor) {
  std::vector<Outcome> outcomes;
  for (const Client& client : clients()) {
    Runner runner(client.make);
    std::optional<CheckResult> result = runner.check(monitor);
    if (!result) {
      result.emplace();
      result->cause = "(no result)";
    }
    outcomes.push_back({client.name, std::move(*result)});
  }
  return outcomes;
}

std::string describe(const Outcome& o) {
  return o.client + ": ok=" + (o.result.ok ? "true" : "false") + " cause='" + o.result.cause +
         "' status=" + std::to_string(o.result.http_status) + " body='" + o.result.body_excerpt + "'";
}

// What a user sees of a check must not depend on which client ran it.
void expect_agreement(const std::vector<Outcome>& outcomes) {
  ASSERT_EQ(outcomes.size(), 2u);
  const CheckResult& a = outcomes[0].result;
  const CheckResult& b = outcomes[1].result;
  const std::string both = describe(outcomes[0]) + "\n" + describe(outcomes[1]);
  EXPECT_EQ(a.ok, b.ok) << both;
  EXPECT_EQ(a.cause, b.cause) << both;
  EXPECT_EQ(a.http_status, b.http_status) << both;
  EXPECT_EQ(a.body_excerpt, b.body_excerpt) << both;
}

struct Expected {
  bool ok = true;
  std::string cause;
  int status = 200;
  std::string body;
};

Expected up(std::string body, int status = 200) { return {true, "", status, std::move(body)}; }
Expected down(std::string cause, int status = 0, std::string body = "") {
  return {false, std::move(cause), status, std::move(body)};
}

// Each client's result as expected, field by field, then the two agreeing.
void expect_each_and_agreement(const std::vector<Outcome>& outcomes, const Expected& expected) {
  for (const Outcome& o : outcomes) {
    SCOPED_TRACE(o.client);
    EXPECT_EQ(o.result.ok, expected.ok);
    EXPECT_EQ(o.result.cause, expected.cause);
    EXPECT_EQ(o.result.http_status, expected.status);
    EXPECT_EQ(o.result.body_excerpt, expected.body);
  }
  expect_agreement(outcomes);
}

// --- the cases --------------------------------------------------------------------------------

TEST(HttpClients, AnAnswerWithContentLengthIsUpWithItsBody) {
  ScriptedServer server(Reply{ok_with("ok")});
  expect_each_and_agreement(check_with_each(monitor_of(server.url())), up("ok"));
}

TEST(HttpClients, AChunkedBodyIsJoinedAndSearchedForTheKeyword) {
  ScriptedServer server(
      Reply{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            "6\r\nhello \r\n5\r\nworld\r\n0\r\n\r\n"});
  auto monitor = monitor_of(server.url());
  expect_each_and_agreement(check_with_each(monitor), up("hello world"));

  spec_of(monitor).keyword = "world";  // only in the second chunk
  expect_each_and_agreement(check_with_each(monitor), up("hello world"));

  spec_of(monitor).keyword = "goodbye";
  expect_each_and_agreement(check_with_each(monitor),
                            down("keyword 'goodbye' not found in the body", 200, "hello world"));
}

TEST(HttpClients, ABodyEndedByTheServerClosingIsReadWhole) {
  ScriptedServer server(Reply{"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nall of it, until the close"});
  expect_each_and_agreement(check_with_each(monitor_of(server.url())), up("all of it, until the close"));
}

TEST(HttpClients, A503IsDownWithTheStatusAsTheCause) {
  ScriptedServer server(Reply{"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 8\r\n\r\ndegraded"});
  expect_each_and_agreement(check_with_each(monitor_of(server.url())), down("HTTP 503", 503, "degraded"));
}

// The answer announces 1000 bytes and the connection stays open: a client waiting for the
// body would run into the monitor's timeout.
TEST(HttpClients, AHeadCheckDoesNotWaitForTheAnnouncedBody) {
  ScriptedServer server(Reply{"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", Ending::kHold});
  auto monitor = monitor_of(server.url());
  spec_of(monitor).method = "HEAD";
  expect_each_and_agreement(check_with_each(monitor), up(""));
  for (const Recorded& request : server.requests()) EXPECT_EQ(request.method, "HEAD");
}

TEST(HttpClients, APostSendsItsBodyAndHeadersAsTheOtherClientDoes) {
  ScriptedServer server(Reply{ok_with("ok")});
  auto monitor = monitor_of(server.url("/submit?x=1"));
  spec_of(monitor).method = "POST";
  spec_of(monitor).body = "step=42&loss=0.5";
  spec_of(monitor).headers = {{"X-Token", "abc"}};
  expect_each_and_agreement(check_with_each(monitor), up("ok"));

  const auto sent = server.requests();
  ASSERT_EQ(sent.size(), 2u);
  for (size_t i = 0; i < sent.size(); ++i) {
    SCOPED_TRACE(clients()[i].name);
    const Recorded& request = sent[i];
    EXPECT_EQ(request.method, "POST");
    EXPECT_EQ(request.target, "/submit?x=1");
    EXPECT_EQ(request.body, "step=42&loss=0.5");
    EXPECT_EQ(request.header("Content-Length"), "16");
    EXPECT_EQ(request.header("X-Token"), "abc");
    EXPECT_TRUE(request.header("User-Agent").starts_with("trainwatch/")) << request.header("User-Agent");
    EXPECT_EQ(request.all("Host"), std::vector<std::string>{"127.0.0.1:" + std::to_string(server.port())});
    EXPECT_EQ(request.all("Content-Type").size(), 1u);
  }
  // Without a Content-Type of the monitor's, both send the same default.
  EXPECT_EQ(sent[0].header("Content-Type"), sent[1].header("Content-Type"));

  spec_of(monitor).headers.emplace_back("content-type", "application/json");
  expect_each_and_agreement(check_with_each(monitor), up("ok"));
  const auto typed = server.requests();
  ASSERT_EQ(typed.size(), 4u);
  for (size_t i = 2; i < typed.size(); ++i) {
    SCOPED_TRACE(clients()[i - 2].name);
    EXPECT_EQ(typed[i].all("Content-Type"), std::vector<std::string>{"application/json"});
  }
}

// /start answers 302 to /final; /final answers 200.
Reply redirecting(const Recorded& request) {
  if (request.target == "/final") return Reply{ok_with("arrived")};
  return Reply{"HTTP/1.1 302 Found\r\nLocation: /final\r\nContent-Length: 5\r\n\r\nmoved"};
}

TEST(HttpClients, ARedirectIsFollowedAndTheFinalAnswerJudged) {
  ScriptedServer server(redirecting);
  expect_each_and_agreement(check_with_each(monitor_of(server.url("/start"))), up("arrived"));
}

TEST(HttpClients, ARedirectNotToBeFollowedIsJudgedItselfAndPasses) {
  ScriptedServer server(redirecting);
  auto monitor = monitor_of(server.url("/start"));
  spec_of(monitor).follow_redirects = false;
  expect_each_and_agreement(check_with_each(monitor), up("moved", 302));
  for (const Recorded& request : server.requests()) EXPECT_EQ(request.target, "/start");
}

TEST(HttpClients, AnInterim100ContinueIsSkippedForTheFinalAnswer) {
  ScriptedServer server(Reply{"HTTP/1.1 100 Continue\r\n\r\n" + ok_with("ok")});
  expect_each_and_agreement(check_with_each(monitor_of(server.url())), up("ok"));
}

TEST(HttpClients, ABodyOver1MiBIsDown) {
  constexpr size_t kTwoMiB = 2 * 1024 * 1024;
  ScriptedServer server(Reply{ok_with(std::string(kTwoMiB, 'x'))});
  expect_each_and_agreement(check_with_each(monitor_of(server.url())), down("body over 1 MiB", 200));
}

TEST(HttpClients, ABodyCutShortByTheServerClosingIsDown) {
  ScriptedServer server(Reply{"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b"});
  expect_each_and_agreement(check_with_each(monitor_of(server.url())),
                            down("connection: closed before the response ended", 200));
}

TEST(HttpClients, AServerThatNeverAnswersTimesOutAtTheMonitorsTimeout) {
  ScriptedServer server(Reply{"", Ending::kHold});
  auto monitor = monitor_of(server.url());
  monitor.timeout = Millis{300};
  expect_each_and_agreement(check_with_each(monitor), down("timeout after 300ms"));
}

TEST(HttpClients, ARefusedConnectionSaysSo) {
  // A port bound but not listening: a connection to it is refused, and no other test or
  // process can take the port meanwhile.
  const int bound = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(bound, reinterpret_cast<sockaddr*>(&addr), len), 0);
  ASSERT_EQ(::getsockname(bound, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const auto url = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/";
  expect_each_and_agreement(check_with_each(monitor_of(url)), down("connect: connection refused"));
  ::close(bound);
}

// The server reads the request and resets at once: the RST meets a client waiting for its
// answer (reset before reading, it could also meet the client's send, a race with
// "broken pipe" among its outcomes).
TEST(HttpClients, AConnectionResetIsDown) {
  ScriptedServer server(Reply{"", Ending::kReset});
  const auto outcomes = check_with_each(monitor_of(server.url()));
  for (const Outcome& o : outcomes) {
    SCOPED_TRACE(o.client);
    EXPECT_FALSE(o.result.ok);
    EXPECT_EQ(o.result.http_status, 0);
    EXPECT_EQ(o.result.body_excerpt, "");
    const std::vector<std::string> accepted = {"connection: connection reset by peer",
                                               "connect: connection reset by peer",
                                               "empty reply from server"};
    EXPECT_NE(std::ranges::find(accepted, o.result.cause), accepted.end()) << describe(o);
  }
  // Agreement on the cause is not required here alone: which system call sees the RST
  // first (a read, or curl's check of the connection) differs between the clients, and
  // each words what its call saw. Both say the check failed.
  EXPECT_EQ(outcomes[0].result.ok, outcomes[1].result.ok);
  std::cout << "[ reset    ] " << describe(outcomes[0]) << "\n[ reset    ] " << describe(outcomes[1]) << "\n";
}

TEST(HttpClients, AServerClosingWithoutAByteIsAnEmptyReply) {
  ScriptedServer server(Reply{"", Ending::kClose});
  expect_each_and_agreement(check_with_each(monitor_of(server.url())), down("empty reply from server"));
}

// A reply that does not begin with an HTTP status line reads the same from both clients,
// so a monitor moved from one to the other (a redirect hands it to curl) keeps its cause.
TEST(HttpClients, GarbageIsNotAnHttpResponse) {
  ScriptedServer server(Reply{"hello there\r\n\r\n"});
  const auto outcomes = check_with_each(monitor_of(server.url()));
  for (const Outcome& o : outcomes) {
    SCOPED_TRACE(o.client);
    EXPECT_FALSE(o.result.ok);
    EXPECT_EQ(o.result.cause, "invalid response: not an HTTP response") << describe(o);
    EXPECT_EQ(o.result.http_status, 0);
  }
  expect_agreement(outcomes);
}

TEST(HttpClients, AHostNameIsResolved) {
  ScriptedServer server(Reply{ok_with("ok")});
  const std::string url = "http://localhost:" + std::to_string(server.port()) + "/";
  expect_each_and_agreement(check_with_each(monitor_of(url)), up("ok"));
  for (const Recorded& request : server.requests()) {
    EXPECT_EQ(request.header("Host"), "localhost:" + std::to_string(server.port()));
  }
}

// --- which client the server picks ---------------------------------------------------------

bool plain_can_check(const std::string& url) { return plain_http_target(url).has_value(); }

TEST(PlainHttpCheckerScope, TakesPlainHttpUrlsAndLeavesTlsAndCredentialsToCurl) {
  EXPECT_TRUE(plain_can_check("http://127.0.0.1:8080/x"));
  EXPECT_TRUE(plain_can_check("http://localhost/"));
  EXPECT_TRUE(plain_can_check("http://[::1]:80/"));
  EXPECT_FALSE(plain_can_check("https://127.0.0.1:8443/"));
  EXPECT_FALSE(plain_can_check("https://localhost/"));
  EXPECT_FALSE(plain_can_check("http://user:pw@localhost/"));
}

// The engine decided the check, then the whole process was stopped long enough for another
// replica to take the monitor: asked again as the check starts, it sends nothing.
TEST(PlainHttpChecker, ACheckNoLongerWantedAsItStartsSendsNothing) {
  ScriptedServer server(Reply{ok_with("ok")});
  Runner runner(clients().front().make);
  auto unwanted = runner.check(monitor_of(server.url("/")), [] { return false; });
  ASSERT_TRUE(unwanted);
  EXPECT_FALSE(unwanted->ok);
  EXPECT_TRUE(unwanted->not_started) << unwanted->cause;
  auto wanted = runner.check(monitor_of(server.url("/")));
  ASSERT_TRUE(wanted);
  EXPECT_TRUE(wanted->ok) << wanted->cause;
  EXPECT_EQ(server.requests().size(), 1u) << "only the wanted check reached the server";
}

Factory server_router() {
  return [](asio::io_context& io, const Clock& clock, TimerFactory& timers) -> std::unique_ptr<Checker> {
    return std::make_unique<HttpChecker>(io, clock, timers);
  };
}

TEST(HttpCheckerRouting, CredentialsInTheUrlAreSentAsBasicAuth) {
  ScriptedServer server(Reply{ok_with("ok")});
  Runner runner(server_router());
  auto result = runner.check(monitor_of("http://user:pw@127.0.0.1:" + std::to_string(server.port()) + "/"));
  ASSERT_TRUE(result);
  EXPECT_TRUE(result->ok) << result->cause;
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0].header("Authorization"), "Basic dXNlcjpwdw==");  // user:pw
}

// The first check meets the redirect on Beast and hands it to curl; the next ones go to
// curl directly. Every one reports the final answer.
TEST(HttpCheckerRouting, ARedirectingMonitorIsFollowedOnEveryCheck) {
  ScriptedServer server(redirecting);
  Runner runner(server_router());
  const auto monitor = monitor_of(server.url("/start"));
  for (int i = 0; i < 3; ++i) {
    auto result = runner.check(monitor);
    ASSERT_TRUE(result);
    EXPECT_TRUE(result->ok) << result->cause;
    EXPECT_EQ(result->http_status, 200);
    EXPECT_EQ(result->body_excerpt, "arrived");
  }
  // 1 (Beast) + 2 (curl) for the first check, then 2 (curl) for each of the next two.
  EXPECT_EQ(server.requests().size(), 7u);
}

// The Beast client says "Connection: close" (its connection is never reused); curl does not.
bool made_by_the_plain_client(const Recorded& request) { return request.header("Connection") == "close"; }

TEST(HttpCheckerRouting, AMonitorWhoseUrlNoLongerRedirectsIsCheckedByThePlainClientAgain) {
  ScriptedServer server(redirecting);
  Runner runner(server_router());
  ASSERT_TRUE(runner.check(monitor_of(server.url("/start"))));  // learnt: /start redirects
  const size_t before = server.requests().size();
  auto edited = runner.check(monitor_of(server.url("/final")));  // the same monitor, its URL edited
  ASSERT_TRUE(edited);
  EXPECT_TRUE(edited->ok) << edited->cause;
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), before + 1);
  EXPECT_TRUE(made_by_the_plain_client(requests.back()));
  EXPECT_FALSE(made_by_the_plain_client(requests[before - 1])) << "the redirect itself was followed by curl";
}

}  // namespace
}  // namespace trainwatch::checks
