// A small HTTP/1.1 server on Boost.Beast, shared by `trainwatch serve` (API, pings, pages)
// and `trainwatch agent` (/health, /metrics).
//
// Threading: one io_context per thread, like nginx's workers. Each context given to
// start() must be run by exactly one thread; the server accepts on the first and hands
// connections to the contexts in turn. A connection lives on one context, so its handlers
// never run at once and need no strand. Handlers must not block for long; a handler that
// has to wait (a ping waiting for its commit) keeps the Responder and calls it later from
// any thread.
//
// Bounds (ServerOptions): header and body size (431/413 at the bound); connections per
// client address (a new one is closed at once); connections in all (a new one closes the
// connection that has waited longest for a request, or is closed at once when none is
// waiting: http/waiting_list.h); a request must arrive whole within request_timeout of
// the connection's accept or, on keep-alive, of its first byte, and a keep-alive
// connection may idle idle_timeout (the socket is closed at either); one request at a
// time per connection (no pipelining queue to grow); accept() failures such as EMFILE
// pause accepting for 10-100 ms instead of spinning (http/accept_backoff.h). Every refusal
// and close is counted in ServerStats.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "core/clock.h"
#include "core/result.h"
#include "http/server_stats.h"

namespace trainwatch::http {

struct Request {
  std::string method;                          // "GET", "POST", ...
  std::string target;                          // as sent: path plus query
  std::string path;                            // decoded path, no query
  std::map<std::string, std::string> query;    // decoded query parameters (last one wins)
  std::map<std::string, std::string> params;   // from the route pattern: "/x/{name}" -> name
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
  std::string remote_address;

  // The header's value, or "" when absent. `name` must be lower case.
  std::string_view header(std::string_view name) const;
};

struct Response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  // A body shared with a cache, sent instead of `body` when set: large cached answers
  // (the 2 MB monitor list) go out without a copy per request.
  std::shared_ptr<const std::string> shared_body;
  std::vector<std::pair<std::string, std::string>> headers;

  static Response text(int status, std::string body);
  static Response json(int status, std::string body);
  // 204: the write was done and there is nothing to say (a DELETE, a pause).
  static Response no_content();
  // RFC 9457 problem details: {"type","title","status","detail"}.
  static Response problem(int status, std::string_view detail);
};

// Sends the response for one request. Copyable; the first call sends, later calls and
// calls after the connection closed are ignored. Safe to call from any thread.
class Responder {
 public:
  using SendFn = std::function<void(Response)>;
  explicit Responder(SendFn send);
  void operator()(Response response) const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

using Handler = std::function<void(const Request&, Responder)>;

// Routes by method and path pattern. Segments in braces capture one path segment:
// "/api/v1/monitors/{name}". A pattern ending in "/{rest...}" captures the remainder.
// Unknown paths answer 404 and known paths with another method 405, both as problems.
class Router {
 public:
  void add(std::string method, const std::string& pattern, Handler handler);
  // Methods may be a list: add({"GET","HEAD","POST"}, ...).
  void add(const std::vector<std::string>& methods, const std::string& pattern, const Handler& handler);

  void dispatch(Request& request, Responder respond) const;

 private:
  struct Route {
    std::string method;
    std::vector<std::string> segments;
    Handler handler;
  };
  std::vector<Route> routes_;
};

struct ServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;  // 0: pick a free port (see Server::port)
  size_t max_header_bytes = 16 * 1024;
  size_t max_body_bytes = 1024 * 1024;
  size_t max_connections = 10'000;  // see the bounds above; fit it to the fd limit (connection_budget.h)
  size_t max_connections_per_address = 256;      // a new connection over it is closed at once
  Millis request_timeout{10'000};                // header and body, from accept or the first byte
  Millis idle_timeout{60'000};                   // keep-alive connection with no request
  std::shared_ptr<ServerStats> stats = nullptr;  // counters for /metrics; null: counted and not shown
  // Where warnings go (an accept failing for lack of descriptors), rate-limited by the
  // server; null: standard error.
  std::function<void(const std::string&)> warn = nullptr;
  const Clock* clock = nullptr;  // paces those warnings; null: the system clock
};

class Server {
 public:
  // Binds and starts accepting. Fails with a clear message when the address is in use
  // or cannot be bound.
  static Result<std::shared_ptr<Server>> start(const std::vector<boost::asio::io_context*>& contexts,
                                               ServerOptions options, std::shared_ptr<const Router> router);
  static Result<std::shared_ptr<Server>> start(boost::asio::io_context& io, ServerOptions options,
                                               std::shared_ptr<const Router> router) {
    return start(std::vector<boost::asio::io_context*>{&io}, std::move(options), std::move(router));
  }
  virtual ~Server() = default;
  virtual uint16_t port() const = 0;
  // Stops accepting; open connections finish their current request and close.
  virtual void stop() = 0;
};

}  // namespace trainwatch::http
