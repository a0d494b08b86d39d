// PlainHttpChecker: an http:// check over one fresh TCP connection, with Boost.Beast on
// the engine's io_context.
//
// Why not libcurl for these too: on loopback a check's cost is mostly the kernel's, and
// libcurl spends about twenty-five system calls on a check (socket options, getsockname
// and getpeername three and two times, polls and fcntls after connect) where this client
// makes about ten (socket, connect, epoll registration, one send, the reads, close), and
// it skips curl's own bookkeeping. bench/RESULTS.md ("the engine") has the figures.
// Every check that needs more than plain HTTP is handed whole to `fallback` (libcurl,
// CurlHttpChecker, in the server): an https:// URL, credentials in the URL, and a
// redirect to follow, after which that URL goes to `fallback` from its next check on.
//
// The request is what curl sends: the method, Host, `User-Agent: trainwatch/VERSION`,
// `Accept: */*`, the monitor's headers (a header of the same name replaces a default),
// its body with Content-Length (and form Content-Type unless one is given), plus
// `Connection: close`, as the connection is never reused.
//
// Bounds: the whole check within the monitor's timeout; response headers at most
// kMaxHeaderBytes and the body at most kMaxHttpBodyBytes (http_verdict.h), beyond which the check fails and
// reading stops. Causes read as curl's do: "connect: connection refused", "timeout after
// 5s", "empty reply from server", "body over 1 MiB", "invalid response: ...".
//
// Threading: check() may be called from any thread; the work and `done` run on the
// io_context, `done` never inline from check().
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>

#include "checks/checker.h"
#include "core/clock.h"
#include "core/timer.h"

namespace trainwatch::checks {

// Where a URL this client can check points.
struct PlainHttpTarget {
  std::optional<boost::asio::ip::address> address;  // an IP literal; otherwise `host` is resolved
  std::string host;
  uint16_t port = 80;
  std::string host_header;  // host[:port] as written in the URL
  std::string path;         // path and query, "/" when empty
};

// The client's scope, pure: an http:// URL whose host is a name or an IP address, with no
// user or password and a port within range; nullopt for anything else (left to libcurl).
std::optional<PlainHttpTarget> plain_http_target(const std::string& url);

class PlainHttpChecker final : public Checker {
 public:
  static constexpr size_t kMaxHeaderBytes = 100 * 1024;

  PlainHttpChecker(boost::asio::io_context& io, const Clock& clock, TimerFactory& timers, Checker& fallback);

  void check(std::shared_ptr<const MonitorConfig> monitor, CheckDone done) override;

 private:
  class Exchange;

  boost::asio::io_context& io_;
  const Clock& clock_;
  TimerFactory& timers_;  // the monitor's timeout
  Checker& fallback_;
  // URLs that answered with a redirect to follow, checked by `fallback_` from then on:
  // keyed by URL, so a monitor whose URL is edited is tried here again. At most
  // kMaxRedirectingUrls, then forgotten all at once. Touched on the io thread only.
  static constexpr size_t kMaxRedirectingUrls = 100'000;
  std::unordered_set<std::string> redirecting_;
};

}  // namespace trainwatch::checks
