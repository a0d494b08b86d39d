#include "checks/curl_http_checker.h"

#include <curl/curl.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "checks/certificate.h"
#include "checks/http_verdict.h"
#include "core/cause_text.h"
#include "core/duration.h"
#include "net/curl_multi.h"

namespace trainwatch::checks {
namespace {

namespace asio = boost::asio;

}  // namespace

struct CurlHttpChecker::Impl {
  // One check in flight. Owned by `transfers` until curl reports it done.
  struct Transfer {
    CURL* easy = nullptr;
    curl_slist* headers = nullptr;
    std::shared_ptr<const MonitorConfig> monitor;  // kept alive while the check runs
    const HttpCheckSpec* spec = nullptr;           // points into `monitor`
    Millis timeout{};
    CheckDone done;
    CheckResult result;
    std::string body;
    bool body_too_large = false;
    // The final response's leaf certificate's validity left, for [CERTIFICATE_EXPIRATION].
    std::optional<double> certificate_ms_left;
    char error[CURL_ERROR_SIZE] = {};
  };

  Impl(asio::io_context& io_in, const Clock& clock_in) : clock(clock_in), multi(io_in) {}

  ~Impl() {
    for (auto& [easy, transfer] : transfers) {
      multi.cancel(easy);
      release(*transfer);
    }
  }

  void start(std::shared_ptr<const MonitorConfig> monitor, CheckDone done) {
    auto transfer = std::make_unique<Transfer>();
    transfer->monitor = std::move(monitor);
    transfer->spec = &std::get<HttpCheckSpec>(transfer->monitor->spec);
    transfer->timeout = transfer->monitor->timeout;
    transfer->done = std::move(done);
    transfer->result.at = clock.system_time();

    CURL* easy = curl_easy_init();
    transfer->easy = easy;
    const HttpCheckSpec& spec = *transfer->spec;
    curl_easy_setopt(easy, CURLOPT_URL, spec.url.c_str());
    curl_easy_setopt(easy, CURLOPT_PRIVATE, transfer.get());
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, transfer->error);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(transfer->timeout.count()));
    curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, spec.follow_redirects ? 1L : 0L);
    curl_easy_setopt(easy, CURLOPT_MAXREDIRS, 10L);
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, spec.tls_verify ? 1L : 0L);
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, spec.tls_verify ? 2L : 0L);
    curl_easy_setopt(easy, CURLOPT_USERAGENT, "trainwatch/" TRAINWATCH_VERSION);
    curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    // A fresh connection per check: connect and TLS times are measured, not cached.
    curl_easy_setopt(easy, CURLOPT_FRESH_CONNECT, 1L);
    curl_easy_setopt(easy, CURLOPT_FORBID_REUSE, 1L);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &Impl::on_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, transfer.get());
    if (spec.method == "HEAD") {
      curl_easy_setopt(easy, CURLOPT_NOBODY, 1L);
    } else if (spec.method != "GET") {
      curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, spec.method.c_str());
    }
    if (!spec.body.empty()) {
      curl_easy_setopt(easy, CURLOPT_POSTFIELDS, spec.body.c_str());
      curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE, static_cast<long>(spec.body.size()));
    }
    for (const auto& [name, value] : spec.headers) {
      transfer->headers = curl_slist_append(transfer->headers, (name + ": " + value).c_str());
    }
    if (transfer->headers != nullptr) curl_easy_setopt(easy, CURLOPT_HTTPHEADER, transfer->headers);
    // The certificate is read for every https:// check: its days left show on the
    // monitor's page, besides what [CERTIFICATE_EXPIRATION] conditions read.
    const bool reads_certificate =
        spec.url.starts_with("https://") ||
        std::any_of(spec.conditions.begin(), spec.conditions.end(),
                    [](const Condition& c) { return c.reads_certificate_expiration(); });
    if (reads_certificate) {
      curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &Impl::on_header);
      curl_easy_setopt(easy, CURLOPT_HEADERDATA, transfer.get());
    }

    transfers.emplace(easy, std::move(transfer));
    multi.add(easy, [this, easy](CURLcode code) { on_done(easy, code); });
  }

  static size_t on_body(char* data, size_t size, size_t count, void* user) {
    auto* transfer = static_cast<Transfer*>(user);
    size_t bytes = size * count;
    if (transfer->body.size() + bytes > kMaxHttpBodyBytes) {
      transfer->body_too_large = true;
      return 0;  // makes curl abort the transfer with CURLE_WRITE_ERROR
    }
    transfer->body.append(data, bytes);
    return bytes;
  }

  // The connection's TLS session can be read only while the transfer runs: each
  // response's status line is the moment to read its certificate, so after redirects the
  // final response's certificate is the one judged (and none after a hop to http://).
  static size_t on_header(char* data, size_t size, size_t count, void* user) {
    auto* transfer = static_cast<Transfer*>(user);
    const size_t bytes = size * count;
    if (std::string_view(data, bytes).starts_with("HTTP/")) {
      const curl_tlssessioninfo* tls = nullptr;
      transfer->certificate_ms_left.reset();
      if (curl_easy_getinfo(transfer->easy, CURLINFO_TLS_SSL_PTR, &tls) == CURLE_OK && tls != nullptr &&
          tls->backend == CURLSSLBACKEND_OPENSSL && tls->internals != nullptr) {
        transfer->certificate_ms_left =
            peer_certificate_ms_left(static_cast<SSL*>(tls->internals), transfer->result.at);
      }
    }
    return bytes;
  }

  // --- results ------------------------------------------------------------------------

  // Runs on the io thread, posted by CurlMulti after curl is done with the handle, so a
  // caller that starts the next check from `done` never re-enters curl.
  void on_done(CURL* easy, CURLcode code) {
    auto it = transfers.find(easy);
    if (it == transfers.end()) return;
    std::unique_ptr<Transfer> transfer = std::move(it->second);
    transfers.erase(it);
    finish(*transfer, code);
    release(*transfer);
    transfer->done(std::move(transfer->result));
  }

  static double info_ms(CURL* easy, CURLINFO what) {
    curl_off_t us = 0;
    curl_easy_getinfo(easy, what, &us);
    return static_cast<double>(us) / 1000.0;
  }

  void finish(Transfer& t, CURLcode code) {
    CheckResult& r = t.result;
    r.timings.dns_ms = info_ms(t.easy, CURLINFO_NAMELOOKUP_TIME_T);
    r.timings.connect_ms = info_ms(t.easy, CURLINFO_CONNECT_TIME_T);
    r.timings.tls_ms = info_ms(t.easy, CURLINFO_APPCONNECT_TIME_T);
    r.timings.first_byte_ms = info_ms(t.easy, CURLINFO_STARTTRANSFER_TIME_T);
    r.timings.total_ms = info_ms(t.easy, CURLINFO_TOTAL_TIME_T);
    r.latency_ms = r.timings.total_ms;
    long status = 0;
    curl_easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &status);
    r.http_status = static_cast<int>(status);
    if (code != CURLE_OK) {
      r.ok = false;
      r.cause = describe_failure(t, code);
      return;
    }
    // Kept for alert messages ("Status: 503 degraded"), bounded, whatever the verdict.
    r.body_excerpt = t.body.substr(0, kBodyExcerptBytes);
    HttpVerdict verdict =
        judge_http_response(*t.spec, r.http_status, t.body, r.latency_ms, t.certificate_ms_left);
    r.ok = verdict.ok;
    r.cause = std::move(verdict.cause);
    if (t.certificate_ms_left) {
      r.certificate_expires = r.at + Millis(static_cast<int64_t>(*t.certificate_ms_left));
    }
  }

  // Causes a person understands: "connect: connection refused", "timeout after 10s".
  static std::string describe_failure(const Transfer& t, CURLcode code) {
    long os_errno = 0;
    curl_easy_getinfo(t.easy, CURLINFO_OS_ERRNO, &os_errno);
    std::string os = os_errno != 0 ? lower_first(std::strerror(static_cast<int>(os_errno))) : "";
    switch (code) {
      case CURLE_OPERATION_TIMEDOUT: return "timeout after " + format_duration(t.timeout);
      case CURLE_COULDNT_CONNECT: return "connect: " + (os.empty() ? std::string("could not connect") : os);
      case CURLE_COULDNT_RESOLVE_HOST: return "dns: could not resolve host";
      case CURLE_WRITE_ERROR:
        if (t.body_too_large) return std::string(kBodyTooLarge);
        break;
      case CURLE_GOT_NOTHING: return "empty reply from server";
      case CURLE_PARTIAL_FILE: return "connection: closed before the response ended";
      case CURLE_RECV_ERROR:
      case CURLE_SEND_ERROR:
        if (!os.empty()) return "connection: " + os;
        break;
      case CURLE_SSL_CONNECT_ERROR:
      case CURLE_PEER_FAILED_VERIFICATION:
        return "tls: " + std::string(t.error[0] ? t.error : curl_easy_strerror(code));
      case CURLE_TOO_MANY_REDIRECTS: return "too many redirects";
      case CURLE_WEIRD_SERVER_REPLY:
      case CURLE_UNSUPPORTED_PROTOCOL: {
        const std::string said = t.error[0] ? t.error : curl_easy_strerror(code);
        // No status line at all: curl reads it as HTTP/0.9, which it refuses.
        if (said.find("HTTP/0.9") != std::string::npos) return std::string(kNotHttp);
        return "invalid response: " + said;
      }
      default: break;
    }
    return lower_first(t.error[0] ? t.error : curl_easy_strerror(code));
  }

  static void release(Transfer& t) {
    curl_easy_cleanup(t.easy);
    curl_slist_free_all(t.headers);
    t.easy = nullptr;
    t.headers = nullptr;
  }

  const Clock& clock;
  // Declared before `multi` so it outlives it: the multi handle is torn down first.
  std::map<CURL*, std::unique_ptr<Transfer>> transfers;
  net::CurlMulti multi;
};

CurlHttpChecker::CurlHttpChecker(asio::io_context& io, const Clock& clock)
    : impl_(std::make_unique<Impl>(io, clock)) {}
CurlHttpChecker::~CurlHttpChecker() = default;

void CurlHttpChecker::check(std::shared_ptr<const MonitorConfig> monitor, CheckDone done) {
  impl_->start(std::move(monitor), std::move(done));
}

}  // namespace trainwatch::checks
