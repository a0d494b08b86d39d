#include "net/http_connection.h"

#include <exception>
#include <optional>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/url/parse.hpp>

namespace trainwatch::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using asio::use_awaitable;
using tcp = asio::ip::tcp;

namespace {

// The server answers a few bytes; a longer answer is not read, and the connection goes.
constexpr size_t kMaxAnswerBytes = 64 * 1024;

}  // namespace

struct HttpConnection::Target {
  bool tls = false;
  std::string host;     // as the URL spells it, for Host and SNI ("[::1]" keeps its brackets)
  std::string address;  // for the lookup ("::1")
  std::string port, path;

  std::string origin() const { return (tls ? "https://" : "http://") + host + ":" + port; }
};

struct HttpConnection::Request {
  bhttp::request<bhttp::string_body> message;
};

struct HttpConnection::Link {
  explicit Link(MonoTime opened_at) : opened(opened_at) {}
  // First, so that it goes last: the streams close into it, and the coroutine frames it
  // still holds after a timeout are destroyed while what they refer to exists.
  asio::io_context io;
  asio::ssl::context tls{asio::ssl::context::tls_client};
  std::optional<beast::tcp_stream> plain;                      // http
  std::optional<beast::ssl_stream<beast::tcp_stream>> secure;  // https
  beast::flat_buffer buffer;
  std::string origin;  // Target::origin() it was opened to
  MonoTime opened;
  int requests = 0;  // answered on it so far
};

struct HttpConnection::Attempt {
  std::optional<Result<HttpAnswer>> outcome;  // unset: the deadline passed first
  bool answer_started = false;                // a byte of the answer arrived
  bool keep_alive = false;                    // the answer lets the connection be used again
};

namespace {

template <typename Stream>
asio::awaitable<void> exchange(Stream& stream, beast::flat_buffer& buffer,
                               const bhttp::request<bhttp::string_body>& request, auto& attempt) {
  co_await bhttp::async_write(stream, request, use_awaitable);
  // The answer's first bytes alone: an error before them is what a connection the server
  // closed while idle gives, and then the request may go again (http_connection.h).
  const size_t first = co_await stream.async_read_some(buffer.prepare(kMaxAnswerBytes), use_awaitable);
  buffer.commit(first);
  attempt.answer_started = true;
  bhttp::response_parser<bhttp::string_body> parser;
  parser.body_limit(kMaxAnswerBytes);
  co_await bhttp::async_read(stream, buffer, parser, use_awaitable);
  // Bytes after the answer were not asked for (no pipelining): the connection's framing
  // cannot be trusted any more.
  attempt.keep_alive = parser.get().keep_alive() && buffer.size() == 0;
  HttpAnswer answer;
  answer.status = static_cast<int>(parser.get().result_int());
  answer.content_type = std::string(parser.get()[bhttp::field::content_type]);
  answer.body = std::move(parser.get().body());
  attempt.outcome = std::move(answer);
}

}  // namespace

HttpConnection::HttpConnection(const Clock& clock) : clock_(clock) {}

HttpConnection::~HttpConnection() = default;

Result<int> HttpConnection::post(const std::string& url, const std::string& body, const HttpHeaders& headers,
                                 Millis timeout) {
  auto answer = send("POST", url, body, headers, timeout);
  if (!answer) return answer.error();
  return answer->status;
}

Result<HttpAnswer> HttpConnection::send(std::string_view method, const std::string& url,
                                        const std::string& body, const HttpHeaders& headers, Millis timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto target = parse_target(url);
  if (!target) {
    link_.reset();
    return target.error();
  }
  if (link_ && (link_->origin != target->origin() || clock_.monotonic_time() - link_->opened >= kMaxAge)) {
    link_.reset();
  }
  const bhttp::verb verb = bhttp::string_to_verb(method);
  if (verb == bhttp::verb::unknown)
    return make_error("push.url", "unknown method '" + std::string(method) + "'");
  Request request{{verb, target->path, 11}};
  request.message.set(bhttp::field::host, target->host);
  request.message.set(bhttp::field::user_agent, "trainwatch-agent");
  for (const auto& [name, value] : headers) request.message.set(name, value);
  if (verb != bhttp::verb::get && verb != bhttp::verb::head) {
    request.message.body() = body;
    request.message.prepare_payload();
  }

  const bool reused = link_ != nullptr;
  Attempt tried = attempt(*target, request, deadline);
  if (reused && tried.outcome && !*tried.outcome && !tried.answer_started) {
    // The server most likely closed the idle connection (a restart): once more, fresh.
    link_.reset();
    tried = attempt(*target, request, deadline);
  }
  if (!tried.outcome) {
    link_.reset();  // abandons what is still pending, with the connection
    return make_error("push.failed", "no answer within " + std::to_string(timeout.count()) + " ms");
  }
  if (!*tried.outcome) {
    link_.reset();
    return *tried.outcome;
  }
  const int status = (*tried.outcome)->status;
  const bool fine = status >= 200 && status < 300;
  if (link_ && (!fine || !tried.keep_alive || ++link_->requests >= kMaxRequests)) link_.reset();
  return std::move(**tried.outcome);
}

HttpConnection::Attempt HttpConnection::attempt(const Target& target, const Request& request,
                                                std::chrono::steady_clock::time_point deadline) {
  Attempt tried;
  std::optional<HostLookup::Endpoints> endpoints;
  if (!link_) {
    auto found = lookup_.resolve(target.address, target.port, deadline);
    if (!found) {
      tried.outcome = found.error();
      return tried;
    }
    endpoints = std::move(*found);
    link_ = std::make_unique<Link>(clock_.monotonic_time());
    link_->origin = target.origin();
  }
  Link& link = *link_;
  auto run = [&]() -> asio::awaitable<void> {
    try {
      if (endpoints) {
        beast::tcp_stream tcp_stream(link.io);
        co_await tcp_stream.async_connect(*endpoints, use_awaitable);
        tcp_stream.socket().set_option(tcp::no_delay(true));  // a request is one write; send it now
        if (target.tls) {
          link.tls.set_default_verify_paths();
          link.tls.set_verify_mode(asio::ssl::verify_peer);
          link.secure.emplace(std::move(tcp_stream), link.tls);
          // SNI, and the certificate must name the host.
          // SSL_set_tlsext_host_name, spelled out: the macro's C cast does not pass -Werror.
          std::string sni = target.address;
          if (!SSL_ctrl(link.secure->native_handle(), SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                        static_cast<void*>(sni.data()))) {
            tried.outcome = make_error("push.failed", "cannot set the TLS server name");
            co_return;
          }
          link.secure->set_verify_callback(asio::ssl::host_name_verification(target.address));
          co_await link.secure->async_handshake(asio::ssl::stream_base::client, use_awaitable);
        } else {
          link.plain.emplace(std::move(tcp_stream));
        }
      }
      if (link.secure) {
        co_await exchange(*link.secure, link.buffer, request.message, tried);
      } else {
        co_await exchange(*link.plain, link.buffer, request.message, tried);
      }
    } catch (const boost::system::system_error& e) {
      tried.outcome = make_error("push.failed", e.code().message());
    } catch (const std::exception& e) {  // e.g. memory: the agent never lets one out
      tried.outcome = make_error("push.failed", e.what());
    }
  };
  link.io.restart();
  asio::co_spawn(link.io, run, asio::detached);
  link.io.run_until(deadline);
  return tried;
}

Result<HttpConnection::Target> HttpConnection::parse_target(const std::string& url) {
  auto parsed = boost::urls::parse_absolute_uri(url);
  if (!parsed) return make_error("push.url", "'" + url + "' is not a URL");
  Target t;
  if (parsed->scheme() == "https") {
    t.tls = true;
  } else if (parsed->scheme() != "http") {
    return make_error("push.url", "'" + url + "' must start with http:// or https://");
  }
  t.host = std::string(parsed->encoded_host());
  t.address = std::string(parsed->encoded_host_address());
  if (t.host.empty()) return make_error("push.url", "'" + url + "' names no host");
  t.port = parsed->has_port() ? std::string(parsed->port()) : (t.tls ? "443" : "80");
  t.path = parsed->encoded_path().empty() ? "/" : std::string(parsed->encoded_path());
  if (parsed->has_query()) t.path += "?" + std::string(parsed->encoded_query());
  return t;
}

}  // namespace trainwatch::net
