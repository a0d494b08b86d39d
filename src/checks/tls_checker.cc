#include "checks/tls_checker.h"

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>

#include "checks/certificate.h"
#include "checks/check_attempt.h"
#include "core/cause_text.h"

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

// One handshake: resolve when the host is a name, connect, handshake, judge the
// certificate the server showed. Nothing is sent after the handshake.
class Handshake final : public CheckAttempt {
 public:
  Handshake(asio::io_context& io, const Clock& clock, TimerFactory& timers,
            std::shared_ptr<const MonitorConfig> monitor, CheckDone done)
      : CheckAttempt(io, clock, timers, std::move(monitor), std::move(done)),
        context_(ssl::context::tls_client),
        resolver_(io),
        stream_(io, context_),
        spec_(std::get<TlsCheckSpec>(this->monitor().spec)) {}

 private:
  void begin() override {
    if (std::string problem = prepare(); !problem.empty()) return report(false, problem);
    boost::system::error_code ec;
    auto address = asio::ip::make_address(spec_.host, ec);
    if (!ec) return connect({tcp::endpoint(address, spec_.port)});
    resolver_.async_resolve(spec_.host, std::to_string(spec_.port),
                            [self = self_as<Handshake>()](boost::system::error_code rec,
                                                          const tcp::resolver::results_type& found) {
                              if (self->finished()) return;
                              if (rec) return self->report(false, "dns: " + lower_first(rec.message()));
                              self->connect({found.begin(), found.end()});
                            });
  }

  // Trust and names before connecting; an empty return means ready.
  std::string prepare() {
    boost::system::error_code ec;
    if (spec_.ca_file.empty()) {
      context_.set_default_verify_paths(ec);
    } else {
      context_.load_verify_file(spec_.ca_file, ec);
      if (ec)
        return "ca_file " + spec_.ca_file + ": cannot be read as PEM certificates (" + ec.message() + ")";
    }
    stream_.set_verify_mode(ssl::verify_none);  // judged after the handshake, see the header
    SSL* ssl = stream_.native_handle();
    // SSL_set_tlsext_host_name spelled out: the macro's C cast breaks -Wold-style-cast.
    if (!is_ip_address(name()) && SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                                           const_cast<char*>(name().c_str())) != 1) {
      return "server_name " + name() + ": cannot be sent as SNI";
    }
    return "";
  }

  const std::string& name() const { return spec_.server_name.empty() ? spec_.host : spec_.server_name; }

  void connect(const std::vector<tcp::endpoint>& endpoints) {
    asio::async_connect(stream_.lowest_layer(), endpoints,
                        [self = self_as<Handshake>()](boost::system::error_code ec, const tcp::endpoint&) {
                          if (self->finished()) return;
                          if (ec) return self->report(false, "connect: " + lower_first(ec.message()));
                          self->handshake();
                        });
  }

  void handshake() {
    stream_.async_handshake(ssl::stream_base::client,
                            [self = self_as<Handshake>()](boost::system::error_code ec) {
                              if (self->finished()) return;
                              if (ec)
                                return self->report(false, "tls handshake: " + lower_first(ec.message()));
                              self->judge();
                            });
  }

  void judge() {
    SSL* ssl = stream_.native_handle();
    TlsFindings found;
    found.checked_name = name();
    std::unique_ptr<X509, decltype(&X509_free)> leaf(SSL_get1_peer_certificate(ssl), &X509_free);
    if (leaf) {
      found.leaf = read_leaf_certificate(leaf.get());
      found.chain = chain_problem(SSL_get_verify_result(ssl), found.chain_detail);
      found.name_matches = certificate_matches(leaf.get(), name());
    }
    const SystemTime now = clock().system_time();
    const TlsVerdict verdict = judge_tls(found, {spec_.warn_before, spec_.down_before}, now);
    result().warning = verdict.warning;
    if (found.leaf) {
      if (auto left = certificate_seconds_left(*found.leaf, now)) {
        result().certificate_expires = now + std::chrono::seconds(*left);
      }
    }
    report(verdict.ok, verdict.cause);
  }

  void cancel_io() override {
    resolver_.cancel();
    boost::system::error_code ignored;
    stream_.lowest_layer().close(ignored);
  }

  void record_latency(double elapsed_ms) override {
    CheckAttempt::record_latency(elapsed_ms);
    result().timings.tls_ms = elapsed_ms;
  }

  ssl::context context_;  // before `stream_`, which is built from it
  tcp::resolver resolver_;
  ssl::stream<tcp::socket> stream_;
  const TlsCheckSpec& spec_;  // in the monitor, which the attempt keeps alive
};

}  // namespace

void TlsChecker::check(std::shared_ptr<const MonitorConfig> monitor, CheckDone done) {
  auto handshake = std::make_shared<Handshake>(io_, clock_, timers_, std::move(monitor), std::move(done));
  asio::post(io_, [handshake] { handshake->start(); });
}

}  // namespace trainwatch::checks
