#include "agent/http_post.h"

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

namespace trainwatch::agent {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using asio::use_awaitable;
using tcp = asio::ip::tcp;

struct Target {
  bool tls = false;
  std::string host, port, path;
};

Result<Target> parse_target(const std::string& url) {
  auto parsed = boost::urls::parse_absolute_uri(url);
  if (!parsed) return make_error("push.url", "'" + url + "' is not a URL");
  Target t;
  if (parsed->scheme() == "https") {
    t.tls = true;
  } else if (parsed->scheme() != "http") {
    return make_error("push.url", "'" + url + "' must start with http:// or https://");
  }
  t.host = std::string(parsed->encoded_host());
  if (t.host.empty()) return make_error("push.url", "'" + url + "' names no host");
  t.port = parsed->has_port() ? std::string(parsed->port()) : (t.tls ? "443" : "80");
  t.path = parsed->encoded_path().empty() ? "/" : std::string(parsed->encoded_path());
  if (parsed->has_query()) t.path += "?" + std::string(parsed->encoded_query());
  return t;
}

template <typename Stream>
asio::awaitable<int> send_request(Stream& stream, const bhttp::request<bhttp::string_body>& request) {
  co_await bhttp::async_write(stream, request, use_awaitable);
  beast::flat_buffer buffer;
  bhttp::response_parser<bhttp::string_body> parser;
  parser.body_limit(64 * 1024);  // the server answers a few bytes; more is not read
  co_await bhttp::async_read(stream, buffer, parser, use_awaitable);
  co_return parser.get().result_int();
}

}  // namespace

Result<int> http_post(const std::string& url, const std::string& body, const HttpHeaders& headers,
                      Millis timeout) {
  auto target = parse_target(url);
  if (!target) return target.error();
  bhttp::request<bhttp::string_body> request{bhttp::verb::post, target->path, 11};
  request.set(bhttp::field::host, target->host);
  request.set(bhttp::field::user_agent, "trainwatch-agent");
  for (const auto& [name, value] : headers) request.set(name, value);
  request.body() = body;
  request.prepare_payload();

  // Declared before `io`, so that the coroutine frames `io` still holds when it goes
  // (after a timeout) are destroyed while what they refer to exists.
  std::optional<Result<int>> outcome;
  asio::io_context io;
  auto run = [&]() -> asio::awaitable<void> {
    try {
      tcp::resolver resolver(io);
      auto endpoints = co_await resolver.async_resolve(target->host, target->port, use_awaitable);
      beast::tcp_stream tcp_stream(io);
      co_await tcp_stream.async_connect(endpoints, use_awaitable);
      if (!target->tls) {
        outcome = co_await send_request(tcp_stream, request);
        co_return;
      }
      asio::ssl::context tls(asio::ssl::context::tls_client);
      tls.set_default_verify_paths();
      tls.set_verify_mode(asio::ssl::verify_peer);
      beast::ssl_stream<beast::tcp_stream> stream(std::move(tcp_stream), tls);
      // SNI, and the certificate must name the host.
      // SSL_set_tlsext_host_name, spelled out: the macro's C cast does not pass -Werror.
      if (!SSL_ctrl(stream.native_handle(), SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                    static_cast<void*>(target->host.data()))) {
        outcome = make_error("push.failed", "cannot set the TLS server name");
        co_return;
      }
      stream.set_verify_callback(asio::ssl::host_name_verification(target->host));
      co_await stream.async_handshake(asio::ssl::stream_base::client, use_awaitable);
      outcome = co_await send_request(stream, request);
    } catch (const boost::system::system_error& e) {
      outcome = make_error("push.failed", e.code().message());
    }
  };
  asio::co_spawn(io, run, asio::detached);
  // One bound for the whole call; what is still pending then is abandoned with `io`.
  io.run_for(timeout);
  if (!outcome)
    return make_error("push.failed", "no answer within " + std::to_string(timeout.count()) + " ms");
  return *outcome;
}

}  // namespace trainwatch::agent
