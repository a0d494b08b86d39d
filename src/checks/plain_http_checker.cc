#include "checks/plain_http_checker.h"

#include <sys/socket.h>

#include <cerrno>
#include <optional>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/url/parse.hpp>

#include "checks/check_attempt.h"
#include "checks/http_verdict.h"
#include "core/cause_text.h"
#include "core/duration.h"

namespace trainwatch::checks {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

bool is_redirect(int status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

}  // namespace

// One check: resolve (names only), connect, send, read one response.
class PlainHttpChecker::Exchange final : public CheckAttempt {
 public:
  Exchange(PlainHttpChecker& owner, std::shared_ptr<const MonitorConfig> monitor, CheckDone done,
           PlainHttpTarget target)
      : CheckAttempt(owner.io_, owner.clock_, owner.timers_, std::move(monitor), std::move(done)),
        owner_(owner),
        resolver_(owner.io_),
        socket_(owner.io_),
        spec_(std::get<HttpCheckSpec>(this->monitor().spec)),
        target_(std::move(target)) {}

 private:
  void begin() override {
    try {
      build_request();
    } catch (const std::exception& e) {  // Beast refuses a header name or value over 64 KiB
      return fail(std::string("invalid request: ") + e.what());
    }
    if (target_.address) return connect({tcp::endpoint(*target_.address, target_.port)});
    resolver_.async_resolve(
        target_.host, std::to_string(target_.port),
        [self = self_as<Exchange>()](error_code ec, const tcp::resolver::results_type& found) {
          if (self->finished()) return;
          if (ec) return self->fail("dns: could not resolve host");
          self->result().timings.dns_ms = self->elapsed_ms();
          self->connect({found.begin(), found.end()});
        });
  }

  void build_request() {
    request_.version(11);
    request_.method_string(spec_.method);
    request_.target(target_.path);
    request_.set(bhttp::field::host, target_.host_header);
    request_.set(bhttp::field::user_agent, "trainwatch/" TRAINWATCH_VERSION);
    request_.set(bhttp::field::accept, "*/*");
    request_.set(bhttp::field::connection, "close");
    if (!spec_.body.empty()) request_.set(bhttp::field::content_type, "application/x-www-form-urlencoded");
    for (const auto& [name, value] : spec_.headers) request_.set(name, value);
    if (!spec_.body.empty()) {
      request_.body() = spec_.body;
      request_.prepare_payload();
    }
  }

  // Connects without waiting to be told it has: the request is written straight after
  // connect(2). On loopback or a near host the handshake is already done by then and the
  // write goes out at once, which spares a wait for writability, its epoll change and the
  // SO_ERROR read; otherwise the write waits for the connection as a connect would. A
  // failed connection (refused, unreachable) then surfaces on that write, before a byte
  // left, and is reported as the connect failure it is, after trying the next address.
  void connect(std::vector<tcp::endpoint> found) {
    endpoints_ = std::move(found);
    connect_next();
  }

  void connect_next() {
    const tcp::endpoint to = endpoints_[next_endpoint_++];
    error_code ec;
    socket_.close(ec);
    socket_.open(to.protocol(), ec);
    if (!ec) socket_.non_blocking(true, ec);
    if (ec) return fail("connect: " + lower_first(ec.message()));
    if (::connect(socket_.native_handle(), to.data(), static_cast<socklen_t>(to.size())) != 0 &&
        errno != EINPROGRESS) {
      return connect_failed(error_code(errno, boost::system::system_category()));
    }
    send();
  }

  void connect_failed(error_code ec) {
    if (next_endpoint_ < endpoints_.size()) return connect_next();
    fail("connect: " + lower_first(ec.message()));
  }

  static bool is_connect_error(error_code ec) {
    return ec == asio::error::connection_refused || ec == asio::error::host_unreachable ||
           ec == asio::error::network_unreachable || ec == asio::error::timed_out;
  }

  void send() {
    bhttp::async_write(socket_, request_, [self = self_as<Exchange>()](error_code ec, size_t) {
      if (self->finished()) return;
      if (is_connect_error(ec)) return self->connect_failed(ec);
      if (ec) return self->fail("connection: " + lower_first(ec.message()));
      // The request went out once the connection was open: as near as this client gets
      // to the moment of connecting, without waiting for it on its own.
      self->result().timings.connect_ms = self->elapsed_ms();
      self->new_parser();
      self->read();
    });
  }

  void new_parser() {
    parser_.emplace();
    parser_->header_limit(kMaxHeaderBytes);
    parser_->body_limit(kMaxHttpBodyBytes);
    parser_->skip(spec_.method == "HEAD");  // a HEAD response announces a body it does not send
  }

  void read() {
    bhttp::async_read_some(socket_, buffer_, *parser_,
                           [self = self_as<Exchange>()](error_code ec, size_t bytes) {
                             if (self->finished()) return;
                             if (bytes > 0 && self->result().timings.first_byte_ms == 0)
                               self->result().timings.first_byte_ms = self->elapsed_ms();
                             if (ec) return self->fail(self->describe(ec));
                             if (!self->parser_->is_done()) return self->read();
                             // An interim answer (100 Continue, 103 Early Hints): the final one follows.
                             const int status = self->parser_->get().result_int();
                             if (status >= 100 && status < 200 && status != 101) {
                               self->new_parser();
                               return self->read();
                             }
                             self->judge();
                           });
  }

  std::string describe(error_code ec) const {
    if (ec == bhttp::error::end_of_stream) return "empty reply from server";
    if (ec == bhttp::error::bad_version) return std::string(kNotHttp);  // no "HTTP/1.x" first
    if (ec == bhttp::error::body_limit) return std::string(kBodyTooLarge);
    if (ec == bhttp::error::header_limit) return "invalid response: headers over 100 KiB";
    if (ec == bhttp::error::partial_message) return "connection: closed before the response ended";
    if (ec.category() == bhttp::make_error_code(bhttp::error::bad_version).category())
      return "invalid response: " + ec.message();
    return "connection: " + lower_first(ec.message());
  }

  void judge() {
    const auto& response = parser_->get();
    const int status = response.result_int();
    if (spec_.follow_redirects && is_redirect(status) &&
        response.find(bhttp::field::location) != response.end()) {
      return hand_over_redirect();
    }
    // The verdict may judge the latency, so it is taken now: from the start to the end of
    // the response, as curl reports it.
    judged_ms_ = elapsed_ms();
    CheckAttempt::record_latency(*judged_ms_);
    result().http_status = status;
    const std::string& body = response.body();
    result().body_excerpt = body.substr(0, kBodyExcerptBytes);
    HttpVerdict verdict = judge_http_response(spec_, status, body, result().latency_ms);
    report(verdict.ok, std::move(verdict.cause));
  }

  // libcurl follows it, across schemes and hosts, as the monitor has always been checked.
  void hand_over_redirect() {
    if (owner_.redirecting_.size() >= kMaxRedirectingUrls)
      owner_.redirecting_.clear();  // relearned, one check each
    owner_.redirecting_.insert(spec_.url);
    hand_over(owner_.fallback_);
  }

  // As any failure: a status whose headers came is kept.
  void on_deadline() override { fail("timeout after " + format_duration_config(monitor().timeout)); }

  void fail(std::string cause) {
    if (finished()) return;
    if (parser_ && parser_->is_header_done()) result().http_status = parser_->get().result_int();
    report(false, std::move(cause));
  }

  void record_latency(double elapsed_ms) override {
    CheckAttempt::record_latency(judged_ms_.value_or(elapsed_ms));
  }

  void cancel_io() override {
    resolver_.cancel();
    error_code ignored;
    socket_.close(ignored);
  }

  PlainHttpChecker& owner_;
  tcp::resolver resolver_;
  tcp::socket socket_;
  const HttpCheckSpec& spec_;  // in the monitor, which the attempt keeps alive
  PlainHttpTarget target_;
  std::optional<double> judged_ms_;  // when the response was judged
  bhttp::request<bhttp::string_body> request_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::response_parser<bhttp::string_body>> parser_;
  std::vector<tcp::endpoint> endpoints_;  // tried in order until one connects
  size_t next_endpoint_ = 0;
};

std::optional<PlainHttpTarget> plain_http_target(const std::string& url) {
  auto parsed = boost::urls::parse_absolute_uri(url);
  if (!parsed || parsed->scheme_id() != boost::urls::scheme::http || parsed->has_userinfo())
    return std::nullopt;
  PlainHttpTarget t;
  switch (parsed->host_type()) {
    case boost::urls::host_type::ipv4:
      t.address = asio::ip::address_v4(parsed->host_ipv4_address().to_uint());
      break;
    case boost::urls::host_type::ipv6:
      t.address = asio::ip::address_v6(parsed->host_ipv6_address().to_bytes());
      break;
    case boost::urls::host_type::name: t.host = parsed->host(); break;
    default: return std::nullopt;
  }
  if (!t.address && t.host.empty()) return std::nullopt;
  if (parsed->has_port() && !parsed->port().empty()) {
    t.port = parsed->port_number();
    if (t.port == 0) return std::nullopt;  // past 65535: libcurl says what is wrong with it
  }
  t.host_header = parsed->encoded_host_and_port();
  t.path = parsed->encoded_path().empty() ? "/" : std::string(parsed->encoded_path());
  if (parsed->has_query()) t.path += "?" + std::string(parsed->encoded_query());
  return t;
}

PlainHttpChecker::PlainHttpChecker(asio::io_context& io, const Clock& clock, TimerFactory& timers,
                                   Checker& fallback)
    : io_(io), clock_(clock), timers_(timers), fallback_(fallback) {}

void PlainHttpChecker::check(std::shared_ptr<const MonitorConfig> monitor, CheckDone done) {
  asio::post(io_, [this, monitor = std::move(monitor), done = std::move(done)]() mutable {
    const std::string& url = std::get<HttpCheckSpec>(monitor->spec).url;
    std::optional<PlainHttpTarget> target = plain_http_target(url);
    if (!target || redirecting_.contains(url)) return fallback_.check(std::move(monitor), std::move(done));
    auto exchange =
        std::make_shared<Exchange>(*this, std::move(monitor), std::move(done), std::move(*target));
    exchange->start();
  });
}

}  // namespace trainwatch::checks
