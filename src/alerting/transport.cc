#include "alerting/transport.h"

#include <curl/curl.h>
#include <strings.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>

#include "alerting/providers/provider_util.h"
#include "core/cause_text.h"
#include "core/duration.h"
#include "net/curl_multi.h"
#include "net/local_address.h"

namespace trainwatch::alerting {
namespace {

// Removes every occurrence of `secret` (a URL with a token, a password) from `text`.
void redact(std::string& text, const std::string& secret) {
  if (secret.size() < 4) return;
  for (size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at)) {
    text.replace(at, secret.size(), "[redacted]");
  }
}

}  // namespace

struct Transport::Impl {
  struct Transfer {
    CURL* easy = nullptr;
    curl_slist* headers = nullptr;
    curl_slist* recipients = nullptr;
    OutboundRequest request;
    size_t upload_offset = 0;
    std::string response;
    bool response_too_large = false;
    std::optional<std::string> retry_after;
    std::function<void(SendOutcome)> done;
    char error[CURL_ERROR_SIZE] = {};
    std::string refused;  // why an address it would have connected to is on this host
  };

  Impl(boost::asio::io_context& io_in, bool allow_local) : allow_local_targets(allow_local), multi(io_in) {}

  ~Impl() {
    for (auto& [easy, transfer] : transfers) {
      multi.cancel(easy);
      release(*transfer);
    }
  }

  static size_t on_body(char* data, size_t size, size_t count, void* user) {
    auto* t = static_cast<Transfer*>(user);
    const size_t bytes = size * count;
    if (t->response.size() + bytes > kMaxResponseBytes) {
      t->response_too_large = true;
      return 0;  // aborts the transfer: CURLE_WRITE_ERROR
    }
    t->response.append(data, bytes);
    return bytes;
  }

  static size_t on_header(char* data, size_t size, size_t count, void* user) {
    auto* t = static_cast<Transfer*>(user);
    const size_t bytes = size * count;
    std::string_view line(data, bytes);
    constexpr std::string_view kName = "retry-after:";
    if (line.size() > kName.size() && strncasecmp(line.data(), kName.data(), kName.size()) == 0) {
      std::string value(line.substr(kName.size()));
      while (!value.empty() && (value.back() == '\r' || value.back() == '\n')) value.pop_back();
      t->retry_after = value.substr(0, 64);
    } else if (line.rfind("HTTP/", 0) == 0) {
      t->retry_after.reset();  // a new response (after 100 Continue) starts over
    }
    return bytes;
  }

  static size_t on_read(char* buffer, size_t size, size_t count, void* user) {
    auto* t = static_cast<Transfer*>(user);
    const size_t n = std::min(size * count, t->request.body.size() - t->upload_offset);
    std::copy_n(t->request.body.data() + t->upload_offset, n, buffer);
    t->upload_offset += n;
    return n;
  }

  void send(const OutboundRequest& request, std::function<void(SendOutcome)> done) {
    auto t = std::make_unique<Transfer>();
    t->request = request;
    t->done = std::move(done);
    CURL* easy = curl_easy_init();
    t->easy = easy;
    const OutboundRequest& r = t->request;
    curl_easy_setopt(easy, CURLOPT_URL, r.url.c_str());
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, t->error);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(r.timeout.count()));
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, r.tls_verify ? 1L : 0L);
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, r.tls_verify ? 2L : 0L);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &Impl::on_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, t.get());
    if (r.protocol == OutboundRequest::Protocol::kSmtp) {
      curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
      curl_easy_setopt(easy, CURLOPT_MAIL_FROM, ("<" + r.mail_from + ">").c_str());
      for (const auto& to : r.recipients)
        t->recipients = curl_slist_append(t->recipients, ("<" + to + ">").c_str());
      curl_easy_setopt(easy, CURLOPT_MAIL_RCPT, t->recipients);
      curl_easy_setopt(easy, CURLOPT_UPLOAD, 1L);
      curl_easy_setopt(easy, CURLOPT_READFUNCTION, &Impl::on_read);
      curl_easy_setopt(easy, CURLOPT_READDATA, t.get());
      curl_easy_setopt(easy, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
      if (!r.username.empty()) {
        curl_easy_setopt(easy, CURLOPT_USERNAME, r.username.c_str());
        curl_easy_setopt(easy, CURLOPT_PASSWORD, r.password.c_str());
      }
      long ssl = CURLUSESSL_NONE;
      if (r.starttls == OutboundRequest::Tls::kStartTlsRequired) ssl = CURLUSESSL_ALL;
      if (r.starttls == OutboundRequest::Tls::kStartTlsTry) ssl = CURLUSESSL_TRY;
      curl_easy_setopt(easy, CURLOPT_USE_SSL, ssl);
    } else {
      curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
      curl_easy_setopt(easy, CURLOPT_USERAGENT, "trainwatch/" TRAINWATCH_VERSION);
      curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &Impl::on_header);
      curl_easy_setopt(easy, CURLOPT_HEADERDATA, t.get());
      curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, r.method.c_str());
      curl_easy_setopt(easy, CURLOPT_POSTFIELDS, r.body.c_str());
      curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
      // No "Expect: 100-continue" round trip for our small bodies.
      t->headers = curl_slist_append(t->headers, "Expect:");
      for (const auto& h : r.headers) t->headers = curl_slist_append(t->headers, h.c_str());
      curl_easy_setopt(easy, CURLOPT_HTTPHEADER, t->headers);
    }
    net::CurlMulti::AddressFilter allow;
    if (!allow_local_targets.load()) {
      allow = [t = t.get()](const sockaddr* address) {
        auto local = net::local_address(address);
        if (local) t->refused = *local;
        return !local;
      };
    }
    transfers.emplace(easy, std::move(t));
    multi.add(
        easy, [this, easy](CURLcode code) { on_done(easy, code); }, std::move(allow));
  }

  void on_done(CURL* easy, CURLcode code) {
    auto it = transfers.find(easy);
    if (it == transfers.end()) return;
    std::unique_ptr<Transfer> t = std::move(it->second);
    transfers.erase(it);
    SendOutcome o = outcome(*t, code);
    release(*t);
    t->done(std::move(o));
  }

  static SendOutcome outcome(const Transfer& t, CURLcode code) {
    SendOutcome o;
    curl_off_t us = 0;
    curl_easy_getinfo(t.easy, CURLINFO_TOTAL_TIME_T, &us);
    o.latency_ms = static_cast<double>(us) / 1000.0;
    long status = 0;
    curl_easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &status);
    o.status = static_cast<int>(status);
    const bool smtp = t.request.protocol == OutboundRequest::Protocol::kSmtp;
    if (code == CURLE_OK) {
      o.transport_ok = true;
      o.retry_after = t.retry_after;
      if (!smtp && (o.status < 200 || o.status >= 300)) {
        std::string excerpt = cut_text(t.response, 200);
        for (char& c : excerpt) {
          if (c == '\n' || c == '\r') c = ' ';
        }
        o.error = "HTTP " + std::to_string(o.status) + (excerpt.empty() ? "" : ": " + excerpt);
      }
    } else if (!t.refused.empty() && code == CURLE_COULDNT_CONNECT) {
      o.error = "refused to connect: " + t.refused +
                ", on this host (channel targets there need server.allow_local_channel_targets)";
      o.permanent = true;
      o.refused_here = true;
    } else {
      if (code == CURLE_WRITE_ERROR && t.response_too_large) {
        o.error = "response body over 64 KiB";
      } else if (code == CURLE_OPERATION_TIMEDOUT) {
        o.error = "timeout after " + format_duration(t.request.timeout);
      } else {
        o.error = lower_first(t.error[0] != 0 ? t.error : curl_easy_strerror(code));
      }
      // SMTP: a 5xx reply (recipient refused) or refused credentials will not change.
      // (A garbage answer is CURLE_UNSUPPORTED_PROTOCOL, "HTTP/0.9": retried, the receiver may recover.)
      o.permanent = code == CURLE_LOGIN_DENIED || (smtp && o.status >= 500) || code == CURLE_URL_MALFORMAT;
      if (smtp && o.status != 0) o.error += " (SMTP " + std::to_string(o.status) + ")";
    }
    redact(o.error, t.request.url);
    redact(o.error, t.request.password);
    o.error = cut_text(o.error, kMaxErrorChars);
    return o;
  }

  static void release(Transfer& t) {
    curl_easy_cleanup(t.easy);
    curl_slist_free_all(t.headers);
    curl_slist_free_all(t.recipients);
    t.easy = nullptr;
    t.headers = nullptr;
    t.recipients = nullptr;
  }

  std::atomic<bool> allow_local_targets;
  // Declared before `multi`: the multi handle is torn down first.
  std::map<CURL*, std::unique_ptr<Transfer>> transfers;
  net::CurlMulti multi;
};

Transport::Transport(boost::asio::io_context& io, bool allow_local_targets)
    : impl_(std::make_unique<Impl>(io, allow_local_targets)) {}
Transport::~Transport() = default;

void Transport::send(const OutboundRequest& request, std::function<void(SendOutcome)> done) {
  impl_->send(request, std::move(done));
}

size_t Transport::in_flight() const { return impl_->transfers.size(); }

void Transport::allow_local_targets(bool allow) { impl_->allow_local_targets.store(allow); }

}  // namespace trainwatch::alerting
