// Listener and per-connection session on Boost.Beast.
//
// Lifetimes: a Session is owned by the shared_ptrs held by its pending asio handlers and
// by the Responder of the request it is serving. When the last of those goes (socket
// closed, timeout, or response written with keep-alive off) the Session is destroyed and
// its slot in the connection count is released.
#include <array>
#include <atomic>
#include <exception>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "http/request_target.h"
#include "http/server.h"

namespace trainwatch::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;

struct Shared {
  ServerOptions options;
  std::shared_ptr<const Router> router;
  std::atomic<size_t> connections{0};
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::shared_ptr<Shared> shared)
      : stream_(std::move(socket)), shared_(std::move(shared)) {}

  ~Session() { shared_->connections.fetch_sub(1); }

  void start() {
    asio::post(stream_.get_executor(), [self = shared_from_this()] { self->read_header(); });
  }

 private:
  void read_header() {
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(shared_->options.max_header_bytes));
    parser_->body_limit(shared_->options.max_body_bytes);
    stream_.expires_after(shared_->options.idle_timeout);
    bhttp::async_read_header(stream_, buffer_, *parser_,
                             [self = shared_from_this()](beast::error_code ec, size_t) { self->on_header(ec); });
  }

  void on_header(beast::error_code ec) {
    if (ec) return fail_read(ec);
    // A request without a body (every GET) is complete with its header: go straight on
    // rather than through a second composed read that would only post its completion.
    if (parser_->is_done()) return on_read({});
    stream_.expires_after(shared_->options.request_timeout);
    bhttp::async_read(stream_, buffer_, *parser_,
                      [self = shared_from_this()](beast::error_code ec2, size_t) { self->on_read(ec2); });
  }

  // Parse errors get an answer and a close; transport errors just close.
  void fail_read(beast::error_code ec) {
    if (ec == bhttp::error::body_limit) return reply_and_close(413, "request body over the limit");
    if (ec == bhttp::error::header_limit) return reply_and_close(431, "request header over the limit");
    if (ec.category() == beast::error_code(bhttp::error::end_of_stream).category() && ec != bhttp::error::end_of_stream &&
        ec != bhttp::error::partial_message) {
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
    // The peer of a connection does not change: one getpeername() per connection, not per request.
    if (!remote_known_) {
      remote_known_ = true;
      beast::error_code addr_ec;
      auto remote = stream_.socket().remote_endpoint(addr_ec);
      if (!addr_ec) remote_address_ = remote.address().to_string();
    }
    request.remote_address = remote_address_;

    // No read deadline while the handler works; a handler that waits owns its own bound.
    stream_.expires_never();
    if (!parse_target(request)) return reply_and_close(400, "malformed request target");

    // dispatch: a handler that answers at once (on this connection's thread) writes inline
    // instead of queueing one more completion; an answer from another thread is posted here.
    Responder respond([self = shared_from_this()](Response response) {
      asio::dispatch(self->stream_.get_executor(), [self, r = std::move(response)]() mutable { self->write(std::move(r)); });
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
    stream_.expires_after(shared_->options.request_timeout);
    std::array<asio::const_buffer, 2> buffers = {asio::buffer(head_out_),
                                                 shared_out_ ? asio::buffer(*shared_out_) : asio::buffer(body_out_)};
    asio::async_write(stream_, buffers, [self = shared_from_this()](beast::error_code ec, size_t) {
      std::string().swap(self->body_out_);
      self->shared_out_.reset();
      if (ec || !self->keep_alive_) return self->close();
      self->read_header();
    });
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
  std::shared_ptr<Shared> shared_;
  bool keep_alive_ = true;
  bool head_ = false;
  bool remote_known_ = false;
  std::string remote_address_;
  std::string head_out_;  // the response header being written; one response at a time per connection
  std::string body_out_;  // its body, released once written
  std::shared_ptr<const std::string> shared_out_;  // or its shared body, let go once written
};

class Listener final : public Server, public std::enable_shared_from_this<Listener> {
 public:
  Listener(std::vector<asio::io_context*> contexts, std::shared_ptr<Shared> shared)
      : contexts_(std::move(contexts)), acceptor_(*contexts_.front()), shared_(std::move(shared)) {}

  Status bind() {
    beast::error_code ec;
    auto address = asio::ip::make_address(shared_->options.host, ec);
    if (ec) return make_error("http.bad_address", "'" + shared_->options.host + "' is not an IP address");
    tcp::endpoint endpoint(address, shared_->options.port);
    auto where = shared_->options.host + ":" + std::to_string(shared_->options.port);
    if (acceptor_.open(endpoint.protocol(), ec); ec) return make_error("http.bind", "cannot open " + where + ": " + ec.message());
    acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (acceptor_.bind(endpoint, ec); ec) return make_error("http.bind", "cannot listen on " + where + ": " + ec.message());
    if (acceptor_.listen(asio::socket_base::max_listen_connections, ec); ec) {
      return make_error("http.bind", "cannot listen on " + where + ": " + ec.message());
    }
    port_ = acceptor_.local_endpoint(ec).port();
    return Ok{};
  }

  void accept() {
    asio::io_context& next = *contexts_[next_context_++ % contexts_.size()];
    acceptor_.async_accept(next, [self = shared_from_this()](beast::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted || !self->acceptor_.is_open()) return;
      if (!ec) self->admit(std::move(socket));
      self->accept();
    });
  }

  uint16_t port() const override { return port_; }

  void stop() override {
    asio::post(acceptor_.get_executor(), [self = shared_from_this()] {
      beast::error_code ec;
      self->acceptor_.close(ec);
    });
  }

 private:
  // At the connection bound the new socket is closed at once: the client sees a reset
  // and retries, and the server's memory stays bounded.
  void admit(tcp::socket socket) {
    if (shared_->connections.fetch_add(1) >= shared_->options.max_connections) {
      shared_->connections.fetch_sub(1);
      beast::error_code ec;
      socket.close(ec);
      return;
    }
    // Every response is one gathered write and the next request waits for all of it, so
    // Nagle would only hold a large body's last segment for the client's delayed ACK
    // (40 ms on Linux): the p99 of every answer over a few segments.
    beast::error_code ec;
    socket.set_option(tcp::no_delay(true), ec);
    std::make_shared<Session>(std::move(socket), shared_)->start();
  }

  std::vector<asio::io_context*> contexts_;
  size_t next_context_ = 0;  // accept()'s chain only: one accept at a time
  tcp::acceptor acceptor_;
  std::shared_ptr<Shared> shared_;
  uint16_t port_ = 0;
};

}  // namespace

Result<std::shared_ptr<Server>> Server::start(std::vector<asio::io_context*> contexts, ServerOptions options,
                                              std::shared_ptr<const Router> router) {
  if (contexts.empty()) return make_error("http.bind", "no io_context to serve on");
  auto shared = std::make_shared<Shared>();
  shared->options = std::move(options);
  shared->router = std::move(router);
  auto listener = std::make_shared<Listener>(std::move(contexts), shared);
  if (auto status = listener->bind(); !status) return status.error();
  listener->accept();
  return std::shared_ptr<Server>(listener);
}

}  // namespace trainwatch::http
