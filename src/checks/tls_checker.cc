#include "checks/tls_checker.h"

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>

#include "checks/certificate.h"
#include "core/cause_text.h"
#include "core/duration.h"

namespace trainwatch::checks {
namespace {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

bool is_ip_address(const std::string& host) {
  boost::system::error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

// One handshake. Whichever finishes first, the handshake or the timer, reports; the other
// sees `finished` and does nothing (the timer closes the socket, so a pending step ends
// with operation_aborted).
struct Handshake : std::enable_shared_from_this<Handshake> {
  Handshake(asio::io_context& io, const Clock& c, std::shared_ptr<const MonitorConfig> m, CheckDone d)
      : context(ssl::context::tls_client),
        resolver(io),
        stream(io, context),
        timer(io),
        monitor(std::move(m)),
        spec(std::get<TlsCheckSpec>(monitor->spec)),
        done(std::move(d)),
        clock(c) {
    result.at = clock.system_time();
    started = clock.monotonic_time();
  }

  void start() {
    timer.expires_after(monitor->timeout);
    timer.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (!ec) self->report(false, "timeout after " + format_duration(self->monitor->timeout));
    });
    if (std::string problem = prepare(); !problem.empty()) return report(false, problem);
    boost::system::error_code ec;
    auto address = asio::ip::make_address(spec.host, ec);
    if (!ec) return connect({tcp::endpoint(address, spec.port)});
    resolver.async_resolve(
        spec.host, std::to_string(spec.port),
        [self = shared_from_this()](boost::system::error_code rec, const tcp::resolver::results_type& found) {
          if (rec == asio::error::operation_aborted) return;
          if (rec) return self->report(false, "dns: " + lower_first(rec.message()));
          self->connect({found.begin(), found.end()});
        });
  }

  // Trust and names before connecting; an empty return means ready.
  std::string prepare() {
    boost::system::error_code ec;
    if (spec.ca_file.empty()) {
      context.set_default_verify_paths(ec);
    } else {
      context.load_verify_file(spec.ca_file, ec);
      if (ec)
        return "ca_file " + spec.ca_file + ": cannot be read as PEM certificates (" + ec.message() + ")";
    }
    stream.set_verify_mode(ssl::verify_none);  // judged after the handshake, see the header
    SSL* ssl = stream.native_handle();
    // SSL_set_tlsext_host_name spelled out: the macro's C cast breaks -Wold-style-cast.
    if (!is_ip_address(name()) && SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                                           const_cast<char*>(name().c_str())) != 1) {
      return "server_name " + name() + ": cannot be sent as SNI";
    }
    return "";
  }

  const std::string& name() const { return spec.server_name.empty() ? spec.host : spec.server_name; }

  void connect(const std::vector<tcp::endpoint>& endpoints) {
    asio::async_connect(stream.lowest_layer(), endpoints,
                        [self = shared_from_this()](boost::system::error_code ec, const tcp::endpoint&) {
                          if (ec == asio::error::operation_aborted) return;
                          if (ec) return self->report(false, "connect: " + lower_first(ec.message()));
                          self->handshake();
                        });
  }

  void handshake() {
    stream.async_handshake(ssl::stream_base::client,
                           [self = shared_from_this()](boost::system::error_code ec) {
                             if (ec == asio::error::operation_aborted) return;
                             if (ec)
                               return self->report(false, "tls handshake: " + lower_first(ec.message()));
                             self->judge();
                           });
  }

  void judge() {
    SSL* ssl = stream.native_handle();
    TlsFindings found;
    found.checked_name = name();
    std::unique_ptr<X509, decltype(&X509_free)> leaf(SSL_get1_peer_certificate(ssl), &X509_free);
    if (leaf) {
      found.leaf = read_leaf_certificate(leaf.get());
      found.chain = chain_problem(SSL_get_verify_result(ssl), found.chain_detail);
      found.name_matches = certificate_matches(leaf.get(), name());
    }
    const TlsVerdict verdict = judge_tls(found, {spec.warn_before, spec.down_before}, clock.system_time());
    result.warning = verdict.warning;
    report(verdict.ok, verdict.cause);
  }

  void report(bool ok, std::string cause) {
    if (finished) return;
    finished = true;
    timer.cancel();
    resolver.cancel();
    boost::system::error_code ignored;
    stream.lowest_layer().close(ignored);
    result.ok = ok;
    result.cause = std::move(cause);
    result.latency_ms = std::chrono::duration<double, std::milli>(clock.monotonic_time() - started).count();
    result.timings.total_ms = result.latency_ms;
    result.timings.tls_ms = result.latency_ms;
    asio::post(timer.get_executor(),
               [d = std::move(done), r = std::move(result)]() mutable { d(std::move(r)); });
  }

  ssl::context context;  // before `stream`, which is built from it
  tcp::resolver resolver;
  ssl::stream<tcp::socket> stream;
  asio::steady_timer timer;
  std::shared_ptr<const MonitorConfig> monitor;
  const TlsCheckSpec& spec;  // points into `monitor`
  CheckDone done;
  CheckResult result;
  MonoTime started;
  bool finished = false;
  const Clock& clock;
};

}  // namespace

void TlsChecker::check(std::shared_ptr<const MonitorConfig> monitor, CheckDone done) {
  auto handshake = std::make_shared<Handshake>(io_, clock_, std::move(monitor), std::move(done));
  asio::post(io_, [handshake] { handshake->start(); });
}

}  // namespace trainwatch::checks
