// Listener and per-connection session on Boost.Beast.
//
// Lifetimes: a Session is owned by the shared_ptrs held by its pending asio handlers and
// by the Responder of the request it is serving. When the last of those goes (socket
// closed, timeout, or response written with keep-alive off) the Session is destroyed and
// its slots in the connection counts (in all and per address) are released.
//
// Waiting list (http/waiting_list.h): a Session is on its thread's list exactly while a
// read for a request's header (or a keep-alive connection's first byte) is pending, so
// the pending handler keeps it alive for as long as the list points at it. Every such
// handler takes it off the list first thing, on the same thread.
#include <array>
#include <atomic>
#include <cstdio>
#include <exception>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "http/server.h"

#include "http/accept_backoff.h"
#include "http/address_counts.h"
#include "http/request_target.h"
#include "http/waiting_list.h"

namespace trainwatch::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;

// One HTTP thread: its io_context and the connections on it waiting for a request.
struct ThreadSlot {
  asio::io_context* io;
  WaitingList waiting;  // touched only by the thread running `io`
};

struct Shared {
  Shared(ServerOptions options_in, std::shared_ptr<const Router> router_in)
      : options(std::move(options_in)),
        router(std::move(router_in)),
        stats(options.stats ? options.stats : std::make_shared<ServerStats>()),
        per_address(options.max_connections_per_address) {}

  ServerOptions options;
  std::shared_ptr<const Router> router;
  std::shared_ptr<ServerStats> stats;  // stats->connections is the bound's count
  AddressCounts per_address;
  std::vector<std::unique_ptr<ThreadSlot>> threads;
};

class Session final : public std::enable_shared_from_this<Session>, public WaitingLink {
 public:
  // The listener has counted the connection in stats->connections and per_address; the
  // destructor releases both.
  Session(tcp::socket socket, std::string remote_address, ThreadSlot& thread, std::shared_ptr<Shared> shared)
      : stream_(std::move(socket)),
        thread_(thread),
        shared_(std::move(shared)),
        remote_address_(std::move(remote_address)) {}

  ~Session() override {
    shared_->stats->connections.fetch_sub(1, std::memory_order_relaxed);
    shared_->per_address.remove(remote_address_);
  }

  // `over_capacity`: admitted beyond max_connections; on its own thread it closes that
  // thread's connection waiting longest for a request to make room, or, when none is
  // waiting (every connection is mid-request), closes itself.
  void start(bool over_capacity) {
    asio::post(stream_.get_executor(), [self = shared_from_this(), over_capacity] {
      if (over_capacity && !self->thread_.waiting.evict_oldest()) {
        self->shared_->stats->refused_max_connections.fetch_add(1, std::memory_order_relaxed);
        return self->close();
      }
      // A new connection was opened to ask something: its first request must arrive
      // whole within request_timeout of the accept, so a client that trickles its header
      // holds the slot 10 s, not the 60 s keep-alive allowance.
      self->stream_.expires_after(self->shared_->options.request_timeout);
      self->read_header();
    });
  }

  // On this session's thread, after WaitingList took it off the list.
  void evict() override {
    shared_->stats->closed_for_room.fetch_add(1, std::memory_order_relaxed);
    close();
  }

  bool has_unread_bytes() const override {
    beast::error_code ec;
    return stream_.socket().available(ec) > 0 && !ec;
  }

 private:
  // Reads a request's header under the deadline already set (at accept, or at the first
  // byte of a keep-alive request); the body shares that deadline.
  void read_header() {
    new_parser();
    thread_.waiting.push_back(*this);
    bhttp::async_read_header(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, size_t) { self->on_header(ec); });
  }

  void new_parser() {
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(shared_->options.max_header_bytes));
    parser_->body_limit(shared_->options.max_body_bytes);
  }

  // A keep-alive request whose first bytes are in the buffer. Nearly always the read
  // brought the whole header (a ping is ~100 bytes): it is parsed here, and the request
  // goes on without a composed read, which would only post its completion through the
  // scheduler and arm the deadline timer for nothing (together a fifth of an HTTP
  // thread's instructions per ping, callgrind). A header still incomplete is read on
  // under request_timeout from now.
  void start_buffered_request() {
    new_parser();
    beast::error_code ec;
    buffer_.consume(parser_->put(buffer_.data(), ec));
    if (ec == bhttp::error::need_more) {
      stream_.expires_after(shared_->options.request_timeout);
      thread_.waiting.push_back(*this);
      bhttp::async_read_header(
          stream_, buffer_, *parser_,
          [self = shared_from_this()](beast::error_code ec2, size_t) { self->on_header(ec2); });
      return;
    }
    if (ec) return fail_read(ec);
    // The header is complete; a body still to come is read under request_timeout.
    if (!parser_->is_done()) stream_.expires_after(shared_->options.request_timeout);
    on_header({});
  }

  // After a keep-alive response: up to idle_timeout for the next request's first byte,
  // then request_timeout from that byte for the whole request. A request already in the
  // buffer (pipelined) starts its deadline now.
  void await_next_request() {
    if (buffer_.size() > 0) return start_buffered_request();
    stream_.expires_after(shared_->options.idle_timeout);
    thread_.waiting.push_back(*this);
    constexpr size_t kFirstRead = 4096;  // what one read takes in; the header parser reads on
    stream_.async_read_some(
        buffer_.prepare(kFirstRead), [self = shared_from_this()](beast::error_code ec, size_t n) {
          self->thread_.waiting.remove(*self);
          self->buffer_.commit(n);
          if (ec) {
            if (ec == beast::error::timeout) {
              self->shared_->stats->closed_idle_timeout.fetch_add(1, std::memory_order_relaxed);
            }
            return self->close();
          }
          self->start_buffered_request();
        });
  }

  void on_header(beast::error_code ec) {
    thread_.waiting.remove(*this);  // a no-op when the header was parsed from the buffer
    if (ec) return fail_read(ec);
    // A request without a body (every GET) is complete with its header: go straight on
    // rather than through a second composed read that would only post its completion.
    if (parser_->is_done()) return on_read({});
    bhttp::async_read(stream_, buffer_, *parser_,
                      [self = shared_from_this()](beast::error_code ec2, size_t) { self->on_read(ec2); });
  }

  // Parse errors get an answer and a close; transport errors just close.
  void fail_read(beast::error_code ec) {
    if (ec == beast::error::timeout) {
      shared_->stats->closed_request_timeout.fetch_add(1, std::memory_order_relaxed);
      return close();
    }
    if (ec == bhttp::error::body_limit) return reply_and_close(413, "request body over the limit");
    if (ec == bhttp::error::header_limit) return reply_and_close(431, "request header over the limit");
    if (ec.category() == beast::error_code(bhttp::error::end_of_stream).category() &&
        ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message) {
      return reply_and_close(400, "malformed HTTP request");
    }
    close();
  }

  void reply_and_close(int status, std::string_view detail) {
    keep_alive_ = false;
    head_ = false;
    write(Response::problem(status, detail));
  }

  void on_read(beast::error_code ec) {
    if (ec) return fail_read(ec);
    auto message = parser_->release();
    keep_alive_ = message.keep_alive();
    head_ = message.method() == bhttp::verb::head;

    Request request;
    request.method = std::string(message.method_string());
    request.target = std::string(message.target());
    for (const auto& field : message) {
      std::string name(field.name_string());
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      request.headers[std::move(name)] = std::string(field.value());
    }
    request.body = std::move(message.body());
    request.remote_address = remote_address_;

    // No read deadline while the handler works; a handler that waits owns its own bound.
    stream_.expires_never();
    if (!parse_target(request)) return reply_and_close(400, "malformed request target");

    // dispatch: a handler that answers at once (on this connection's thread) writes inline
    // instead of queueing one more completion; an answer from another thread is posted here.
    Responder respond([self = shared_from_this()](Response response) {
      asio::dispatch(self->stream_.get_executor(),
                     [self, r = std::move(response)]() mutable { self->write(std::move(r)); });
    });
    try {
      shared_->router->dispatch(request, respond);
    } catch (const std::exception&) {
      respond(Response::problem(500, "internal error"));
    }
  }

  // The header is formatted into one reused buffer and sent with the body in a single
  // gathered write: Beast's serializer (a field list allocated per response, then a
  // buffer sequence of each header piece) cost more instructions than the rest of a
  // /health request together (callgrind). The body is moved in, not copied, and released
  // after the write, so a connection that once fetched a large list keeps no large buffer.
  void write(Response response) {
    std::string& out = head_out_;
    out.clear();
    auto reason = bhttp::obsolete_reason(static_cast<bhttp::status>(response.status));
    out.append("HTTP/1.1 ").append(std::to_string(response.status)).append(" ");
    out.append(reason.data(), reason.size()).append("\r\nServer: trainwatch\r\n");
    append_header(out, "Content-Type", response.content_type);
    for (const auto& [name, value] : response.headers) {
      if (!beast::iequals(name, "content-type") && !beast::iequals(name, "content-length")) {
        append_header(out, name, value);
      }
    }
    if (!keep_alive_) out.append("Connection: close\r\n");
    const size_t body_size = response.shared_body ? response.shared_body->size() : response.body.size();
    out.append("Content-Length: ").append(std::to_string(body_size)).append("\r\n\r\n");
    // HEAD: the same headers as GET, Content-Length included, and no body.
    body_out_ = head_ ? std::string() : std::move(response.body);
    shared_out_ = head_ ? nullptr : std::move(response.shared_body);
    const std::array<asio::const_buffer, 2> buffers = {
        asio::buffer(head_out_), shared_out_ ? asio::buffer(*shared_out_) : asio::buffer(body_out_)};
    // First one send on the spot (the socket is non-blocking: Listener::admit). A small
    // answer, every ping's, goes out whole, with no composed write, deadline timer or
    // completion posted through the scheduler; what the socket does not take now is
    // written asynchronously under request_timeout.
    beast::error_code ec;
    const size_t sent = stream_.socket().write_some(buffers, ec);
    if (ec && ec != asio::error::would_block && ec != asio::error::try_again) return written(ec);
    beast::buffers_suffix<std::array<asio::const_buffer, 2>> rest(buffers);
    rest.consume(sent);
    if (beast::buffer_bytes(rest) == 0) return written({});
    stream_.expires_after(shared_->options.request_timeout);
    asio::async_write(stream_, rest,
                      [self = shared_from_this()](beast::error_code ec2, size_t) { self->written(ec2); });
  }

  void written(beast::error_code ec) {
    std::string().swap(body_out_);
    shared_out_.reset();
    if (ec || !keep_alive_) return close();
    // A pipelined request already buffered is started from the scheduler, not from here:
    // answered at once (a 404, a 429), it would write and come back here, one stack frame
    // deeper per request in the buffer.
    if (buffer_.size() > 0) {
      return asio::post(stream_.get_executor(), [self = shared_from_this()] { self->await_next_request(); });
    }
    await_next_request();
  }

  // A header line; CR and LF in a name or value (which would split the response) are dropped.
  static void append_header(std::string& out, std::string_view name, std::string_view value) {
    auto clean = [&out](std::string_view text) {
      for (char c : text) {
        if (c != '\r' && c != '\n') out.push_back(c);
      }
    };
    clean(name);
    out.append(": ");
    clean(value);
    out.append("\r\n");
  }

  void close() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream_.close();
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  ThreadSlot& thread_;
  std::shared_ptr<Shared> shared_;
  bool keep_alive_ = true;
  bool head_ = false;
  const std::string remote_address_;  // from accept: the peer of a connection does not change
  std::string head_out_;  // the response header being written; one response at a time per connection
  std::string body_out_;  // its body, released once written
  std::shared_ptr<const std::string> shared_out_;  // or its shared body, let go once written
};

const Clock& system_clock() {
  static const SystemClock kClock;
  return kClock;
}

class Listener final : public Server, public std::enable_shared_from_this<Listener> {
 public:
  explicit Listener(std::shared_ptr<Shared> shared)
      : shared_(std::move(shared)),
        acceptor_(*shared_->threads.front()->io),
        pause_(*shared_->threads.front()->io),
        backoff_(shared_->options.clock ? *shared_->options.clock : system_clock()) {}

  Status bind() {
    beast::error_code ec;
    auto address = asio::ip::make_address(shared_->options.host, ec);
    if (ec) return make_error("http.bad_address", "'" + shared_->options.host + "' is not an IP address");
    tcp::endpoint endpoint(address, shared_->options.port);
    auto where = shared_->options.host + ":" + std::to_string(shared_->options.port);
    if (acceptor_.open(endpoint.protocol(), ec); ec)
      return make_error("http.bind", "cannot open " + where + ": " + ec.message());
    acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (acceptor_.bind(endpoint, ec); ec)
      return make_error("http.bind", "cannot listen on " + where + ": " + ec.message());
    if (acceptor_.listen(asio::socket_base::max_listen_connections, ec); ec) {
      return make_error("http.bind", "cannot listen on " + where + ": " + ec.message());
    }
    port_ = acceptor_.local_endpoint(ec).port();
    return Ok{};
  }

  // One accept at a time; each new connection goes to the next thread in turn.
  void accept() {
    ThreadSlot& thread = *shared_->threads[next_thread_++ % shared_->threads.size()];
    acceptor_.async_accept(*thread.io, peer_,
                           [self = shared_from_this(), &thread](beast::error_code ec, tcp::socket socket) {
                             if (ec == asio::error::operation_aborted || !self->acceptor_.is_open()) return;
                             // A client that gave up before the accept is no reason to pause; anything else
                             // is (EMFILE and ENFILE above all: retried at once they fail at once, forever).
                             if (ec && ec != asio::error::connection_aborted) return self->pause_after(ec);
                             if (!ec) {
                               self->backoff_.succeeded();
                               self->admit(std::move(socket), thread);
                             }
                             self->accept();
                           });
  }

  uint16_t port() const override { return port_; }

  void stop() override {
    asio::post(acceptor_.get_executor(), [self = shared_from_this()] {
      beast::error_code ec;
      self->acceptor_.close(ec);
      self->pause_.cancel();
    });
  }

 private:
  void pause_after(beast::error_code ec) {
    shared_->stats->accept_failures.fetch_add(1, std::memory_order_relaxed);
    AcceptBackoff::Step step = backoff_.failed(ec.message());
    if (step.log_line) warn(*step.log_line);
    pause_.expires_after(step.pause);
    pause_.async_wait([self = shared_from_this()](beast::error_code wait_ec) {
      if (wait_ec || !self->acceptor_.is_open()) return;
      self->accept();
    });
  }

  void warn(const std::string& line) const {
    if (shared_->options.warn) return shared_->options.warn(line);
    std::fprintf(stderr, "%s\n", line.c_str());
  }

  // Over max_connections_per_address the new socket is closed at once: the client sees a
  // reset. Over max_connections the session makes room on its thread (Session::start).
  void admit(tcp::socket socket, ThreadSlot& thread) {
    std::string address = peer_.address().to_string();
    beast::error_code ec;
    if (!shared_->per_address.try_add(address)) {
      shared_->stats->refused_per_address.fetch_add(1, std::memory_order_relaxed);
      socket.close(ec);
      return;
    }
    const bool over_capacity = shared_->stats->connections.fetch_add(1, std::memory_order_relaxed) >=
                               shared_->options.max_connections;
    // Every response is one gathered write and the next request waits for all of it, so
    // Nagle would only hold a large body's last segment for the client's delayed ACK
    // (40 ms on Linux): the p99 of every answer over a few segments.
    socket.set_option(tcp::no_delay(true), ec);
    // Non-blocking for Session::write's first, synchronous send (the asynchronous
    // operations are unaffected).
    socket.non_blocking(true, ec);
    std::make_shared<Session>(std::move(socket), std::move(address), thread, shared_)->start(over_capacity);
  }

  std::shared_ptr<Shared> shared_;
  tcp::acceptor acceptor_;
  asio::steady_timer pause_;  // between a failed accept and the next
  AcceptBackoff backoff_;     // accept()'s chain only, like the two below
  size_t next_thread_ = 0;
  tcp::endpoint peer_;  // the pending accept's peer
  uint16_t port_ = 0;
};

}  // namespace

Result<std::shared_ptr<Server>> Server::start(const std::vector<asio::io_context*>& contexts,
                                              ServerOptions options, std::shared_ptr<const Router> router) {
  if (contexts.empty()) return make_error("http.bind", "no io_context to serve on");
  auto shared = std::make_shared<Shared>(std::move(options), std::move(router));
  shared->stats->max_connections.store(shared->options.max_connections, std::memory_order_relaxed);
  for (auto* io : contexts) shared->threads.push_back(std::make_unique<ThreadSlot>(ThreadSlot{io, {}}));
  auto listener = std::make_shared<Listener>(shared);
  if (auto status = listener->bind(); !status) return status.error();
  listener->accept();
  return std::shared_ptr<Server>(listener);
}

}  // namespace trainwatch::http
