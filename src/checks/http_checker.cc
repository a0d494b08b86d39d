#include "checks/http_checker.h"

#include <curl/curl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <mutex>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "checks/http_verdict.h"
#include "core/duration.h"

namespace trainwatch {
namespace {

namespace asio = boost::asio;

// curl_global_init is not thread-safe; do it once per process.
void init_curl_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string lower_first(std::string text) {
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return text;
}

}  // namespace

struct HttpChecker::Impl {
  // One check in flight. Owned by `transfers` until curl reports it done.
  struct Transfer {
    CURL* easy = nullptr;
    curl_slist* headers = nullptr;
    std::shared_ptr<const MonitorConfig> monitor;  // kept alive while the check runs
    const HttpCheckSpec* spec = nullptr;            // points into `monitor`
    Millis timeout{};
    CheckDone done;
    CheckResult result;
    std::string body;
    bool body_too_large = false;
    char error[CURL_ERROR_SIZE] = {};
  };

  // A socket curl asked us to watch. `wanted` is curl's latest CURL_POLL_* for it.
  struct Watch {
    explicit Watch(asio::io_context& io, int fd) : descriptor(io, fd) {}
    asio::posix::stream_descriptor descriptor;
    int wanted = CURL_POLL_NONE;
    bool reading = false;
    bool writing = false;
    bool borrowed = false;  // curl owns and closes this descriptor
  };

  Impl(asio::io_context& io_in, const Clock& clock_in) : io(io_in), clock(clock_in), timer(io_in) {
    init_curl_once();
    multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, &Impl::on_socket);
    curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, this);
    curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, &Impl::on_timer);
    curl_multi_setopt(multi, CURLMOPT_TIMERDATA, this);
  }

  ~Impl() {
    for (auto& [easy, transfer] : transfers) {
      curl_multi_remove_handle(multi, easy);
      release(*transfer);
    }
    curl_multi_cleanup(multi);
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
    curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, &Impl::on_open_socket);
    curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, this);
    curl_easy_setopt(easy, CURLOPT_CLOSESOCKETFUNCTION, &Impl::on_close_socket);
    curl_easy_setopt(easy, CURLOPT_CLOSESOCKETDATA, this);
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

    transfers.emplace(easy, std::move(transfer));
    curl_multi_add_handle(multi, easy);
  }

  // --- curl callbacks ---------------------------------------------------------------

  static size_t on_body(char* data, size_t size, size_t count, void* user) {
    auto* transfer = static_cast<Transfer*>(user);
    size_t bytes = size * count;
    if (transfer->body.size() + bytes > kMaxBodyBytes) {
      transfer->body_too_large = true;
      return 0;  // makes curl abort the transfer with CURLE_WRITE_ERROR
    }
    transfer->body.append(data, bytes);
    return bytes;
  }

  static curl_socket_t on_open_socket(void* user, curlsocktype purpose, curl_sockaddr* address) {
    auto* self = static_cast<Impl*>(user);
    if (purpose != CURLSOCKTYPE_IPCXN) return CURL_SOCKET_BAD;
    int fd = ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
    if (fd < 0) return CURL_SOCKET_BAD;
    self->watches.emplace(fd, std::make_unique<Watch>(self->io, fd));
    return fd;
  }

  static int on_close_socket(void* user, curl_socket_t fd) {
    auto* self = static_cast<Impl*>(user);
    auto it = self->watches.find(fd);
    if (it != self->watches.end()) {
      // Deregister from the reactor, then close it ourselves.
      it->second->descriptor.cancel();
      it->second->descriptor.release();
      self->watches.erase(it);
    }
    return ::close(fd);
  }

  static int on_socket(CURL*, curl_socket_t fd, int what, void* user, void*) {
    auto* self = static_cast<Impl*>(user);
    auto it = self->watches.find(fd);
    if (it == self->watches.end()) {
      // A socket curl opened without us (the threaded resolver's wake-up pipe): watch it
      // until curl removes it, then let go before curl closes it.
      if (what == CURL_POLL_REMOVE) return 0;
      it = self->watches.emplace(fd, std::make_unique<Watch>(self->io, fd)).first;
      it->second->borrowed = true;
    }
    Watch& watch = *it->second;
    watch.wanted = what;
    if (what == CURL_POLL_REMOVE) {
      if (watch.borrowed) {
        watch.descriptor.cancel();
        watch.descriptor.release();
        self->watches.erase(it);
      }
      return 0;
    }
    self->arm(fd, watch);
    return 0;
  }

  static int on_timer(CURLM*, long timeout_ms, void* user) {
    auto* self = static_cast<Impl*>(user);
    self->timer.cancel();
    if (timeout_ms < 0) return 0;
    self->timer.expires_after(std::chrono::milliseconds(timeout_ms));
    self->timer.async_wait([self](boost::system::error_code ec) {
      if (ec) return;
      int running = 0;
      curl_multi_socket_action(self->multi, CURL_SOCKET_TIMEOUT, 0, &running);
      self->collect_finished();
    });
    return 0;
  }

  // Starts the waits curl wants that are not already pending. A completed wait re-arms
  // through the same path, so each direction has at most one wait in flight.
  void arm(int fd, Watch& watch) {
    if ((watch.wanted & CURL_POLL_IN) && !watch.reading) {
      watch.reading = true;
      watch.descriptor.async_wait(asio::posix::descriptor_base::wait_read,
                                  [this, fd](boost::system::error_code ec) { on_ready(fd, ec, CURL_CSELECT_IN); });
    }
    if ((watch.wanted & CURL_POLL_OUT) && !watch.writing) {
      watch.writing = true;
      watch.descriptor.async_wait(asio::posix::descriptor_base::wait_write,
                                  [this, fd](boost::system::error_code ec) { on_ready(fd, ec, CURL_CSELECT_OUT); });
    }
  }

  void on_ready(int fd, boost::system::error_code ec, int direction) {
    auto it = watches.find(fd);
    if (ec == asio::error::operation_aborted || it == watches.end()) return;
    Watch* watch = it->second.get();
    (direction == CURL_CSELECT_IN ? watch->reading : watch->writing) = false;
    int running = 0;
    curl_multi_socket_action(multi, fd, ec ? CURL_CSELECT_ERR : direction, &running);
    collect_finished();
    // The action may have closed the socket; look it up again before re-arming.
    it = watches.find(fd);
    if (it != watches.end() && it->second.get() == watch && watch->wanted != CURL_POLL_REMOVE) arm(fd, *watch);
  }

  // --- results ------------------------------------------------------------------------

  void collect_finished() {
    int queued = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi, &queued)) {
      if (msg->msg != CURLMSG_DONE) continue;
      CURL* easy = msg->easy_handle;
      CURLcode code = msg->data.result;
      auto it = transfers.find(easy);
      if (it == transfers.end()) continue;
      std::unique_ptr<Transfer> transfer = std::move(it->second);
      transfers.erase(it);
      curl_multi_remove_handle(multi, easy);
      finish(*transfer, code);
      release(*transfer);
      // Deliver after curl is done with the handle; post so a caller that starts the next
      // check from `done` never re-enters curl from inside its own callback.
      asio::post(io, [done = std::move(transfer->done), result = std::move(transfer->result)]() mutable {
        done(std::move(result));
      });
    }
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
    HttpVerdict verdict = judge_http_response(*t.spec, r.http_status, t.body, r.latency_ms);
    r.ok = verdict.ok;
    r.cause = std::move(verdict.cause);
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
        if (t.body_too_large) return "body over 1 MiB";
        break;
      case CURLE_GOT_NOTHING: return "empty reply from server";
      case CURLE_RECV_ERROR:
      case CURLE_SEND_ERROR:
        if (!os.empty()) return "connection: " + os;
        break;
      case CURLE_SSL_CONNECT_ERROR:
      case CURLE_PEER_FAILED_VERIFICATION:
        return "tls: " + std::string(t.error[0] ? t.error : curl_easy_strerror(code));
      case CURLE_TOO_MANY_REDIRECTS: return "too many redirects";
      case CURLE_WEIRD_SERVER_REPLY:
      case CURLE_UNSUPPORTED_PROTOCOL: return "invalid response: " + std::string(t.error[0] ? t.error : curl_easy_strerror(code));
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

  asio::io_context& io;
  const Clock& clock;
  asio::steady_timer timer;
  CURLM* multi = nullptr;
  std::map<CURL*, std::unique_ptr<Transfer>> transfers;
  std::map<int, std::unique_ptr<Watch>> watches;
};

HttpChecker::HttpChecker(asio::io_context& io, const Clock& clock) : impl_(std::make_unique<Impl>(io, clock)) {}
HttpChecker::~HttpChecker() = default;

void HttpChecker::check(std::shared_ptr<const MonitorConfig> monitor, CheckDone done) {
  impl_->start(std::move(monitor), std::move(done));
}

}  // namespace trainwatch
