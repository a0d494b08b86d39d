#include "net/curl_multi.h"

#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <mutex>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

namespace trainwatch::net {

namespace asio = boost::asio;

void init_curl_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct CurlMulti::Impl {
  // A socket curl asked us to watch. `wanted` is curl's latest CURL_POLL_* for it.
  struct Watch {
    explicit Watch(asio::io_context& io, int fd) : descriptor(io, fd) {}
    asio::posix::stream_descriptor descriptor;
    int wanted = CURL_POLL_NONE;
    bool reading = false;
    bool writing = false;
    bool borrowed = false;  // curl owns and closes this descriptor
  };

  explicit Impl(asio::io_context& io_in) : io(io_in), timer(io_in) {
    init_curl_once();
    multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, &Impl::on_socket);
    curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, this);
    curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, &Impl::on_timer);
    curl_multi_setopt(multi, CURLMOPT_TIMERDATA, this);
  }

  ~Impl() {
    for (auto& [easy, done] : transfers) curl_multi_remove_handle(multi, easy);
    transfers.clear();
    curl_multi_cleanup(multi);
    // Posted handlers hold `alive`; they see it expired and do nothing.
  }

  // One transfer: what to call when it ends, which addresses it may reach. Its address
  // is the open-socket callback's data, valid while the transfer runs (curl opens no
  // socket for a handle once it is removed).
  struct Transfer {
    Impl* impl = nullptr;
    Done done;
    AddressFilter allow;
  };

  void add(CURL* easy, Done done, AddressFilter allow) {
    auto transfer = std::make_unique<Transfer>(Transfer{this, std::move(done), std::move(allow)});
    curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, &Impl::on_open_socket);
    curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, transfer.get());
    curl_easy_setopt(easy, CURLOPT_CLOSESOCKETFUNCTION, &Impl::on_close_socket);
    curl_easy_setopt(easy, CURLOPT_CLOSESOCKETDATA, this);
    transfers.emplace(easy, std::move(transfer));
    curl_multi_add_handle(multi, easy);
  }

  void cancel(CURL* easy) {
    if (transfers.erase(easy) != 0) curl_multi_remove_handle(multi, easy);
  }

  // --- curl callbacks ---------------------------------------------------------------

  static curl_socket_t on_open_socket(void* user, curlsocktype purpose, curl_sockaddr* address) {
    auto* transfer = static_cast<Transfer*>(user);
    Impl* self = transfer->impl;
    if (purpose != CURLSOCKTYPE_IPCXN) return CURL_SOCKET_BAD;
    if (transfer->allow && !transfer->allow(&address->addr)) return CURL_SOCKET_BAD;
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
      watch.descriptor.async_wait(
          asio::posix::descriptor_base::wait_read,
          [this, fd](boost::system::error_code ec) { on_ready(fd, ec, CURL_CSELECT_IN); });
    }
    if ((watch.wanted & CURL_POLL_OUT) && !watch.writing) {
      watch.writing = true;
      watch.descriptor.async_wait(
          asio::posix::descriptor_base::wait_write,
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
    if (it != watches.end() && it->second.get() == watch && watch->wanted != CURL_POLL_REMOVE)
      arm(fd, *watch);
  }

  void collect_finished() {
    int queued = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi, &queued)) {
      if (msg->msg != CURLMSG_DONE) continue;
      CURL* easy = msg->easy_handle;
      CURLcode code = msg->data.result;
      auto it = transfers.find(easy);
      if (it == transfers.end()) continue;
      Done done = std::move(it->second->done);
      transfers.erase(it);
      curl_multi_remove_handle(multi, easy);
      // Post so a caller that starts the next transfer from `done` never re-enters curl
      // from inside its own callback.
      asio::post(io, [done = std::move(done), code, weak = std::weak_ptr<int>(alive)] {
        if (!weak.expired()) done(code);
      });
    }
  }

  asio::io_context& io;
  asio::steady_timer timer;
  CURLM* multi = nullptr;
  std::map<CURL*, std::unique_ptr<Transfer>> transfers;
  std::map<int, std::unique_ptr<Watch>> watches;
  std::shared_ptr<int> alive = std::make_shared<int>(0);
};

CurlMulti::CurlMulti(asio::io_context& io) : impl_(std::make_unique<Impl>(io)) {}
CurlMulti::~CurlMulti() = default;
void CurlMulti::add(CURL* easy, Done done, AddressFilter allow) {
  impl_->add(easy, std::move(done), std::move(allow));
}
void CurlMulti::cancel(CURL* easy) { impl_->cancel(easy); }
size_t CurlMulti::in_flight() const { return impl_->transfers.size(); }

}  // namespace trainwatch::net
