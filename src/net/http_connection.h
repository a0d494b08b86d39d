// HttpConnection: HTTP(S) requests to one server over one kept-alive connection, each
// call synchronous and bounded by its timeout: how the report pusher talks to the server,
// and how a replica hands a job's reports and reads to the replica that holds the job
// (cluster/replica_peers.h).
// Beast over Asio, and OpenSSL for https (the system's CA store, the host name checked),
// so the agent, which also runs inside training processes, maps neither libcurl nor its
// dozen dependencies (the agent's memory target in bench/RESULTS.md).
//
// Why keep it: at 16,384 nodes reporting every 5 s, a connection per report is 3,277 TCP
// (and TLS) handshakes a second for the server; bench/RESULTS.md ("node reports on a
// kept-alive connection") measures what each costs it.
//
// Bounds: a connection carries at most kMaxRequests (100) requests and is not reused once
// kMaxAge (60 s) has passed since it opened; the call then opens a fresh one.
//   - 60 s is the server's own idle keep-alive (docs/operations.md), so a connection the
//     server has surely closed is never tried; and behind a load balancer or a DNS name
//     with several replicas, a node spreads to another replica within a minute. At the
//     default report_every of 5 s that is 12 reports per connection: 12 times fewer
//     handshakes, and the server's connection count stays the node count.
//   - 100 requests bounds the same when reports come faster than one each 0.6 s.
// Dropped (closed; the next call opens a fresh one) on: any error or timeout; an answer
// with `Connection: close` (or HTTP/1.0 without keep-alive); a non-2xx answer; an answer
// it cannot parse, larger than 64 KiB, or followed by bytes nobody asked for; a URL with
// another scheme, host or port. An idle connection holds nothing but its socket.
// Retry: when a REUSED connection fails before any byte of the answer arrived, nearly
// always because the server closed it while it sat idle (a restart, a proxy with a
// shorter idle timeout), the request goes once more on a fresh connection, within the
// same timeout. The server may then get it twice; for a node report that is harmless, as
// the server keeps the newest report of each node (jobs/job_journal.h) and the same report
// again leaves the same state. A fresh connection that fails is not retried.
// Timeout: one bound for the whole call: name lookup (net/host_lookup.h), connect,
// TLS handshake, exchange and the retry.
// Threads: not thread-safe; one thread calls post() (the report pusher's).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/result.h"
#include "net/host_lookup.h"

namespace trainwatch::net {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

// What the server answered: its status, and for a caller that relays it, its body and
// content type (at most 64 KiB; a longer answer is an error).
struct HttpAnswer {
  int status = 0;
  std::string content_type;
  std::string body;
};

class HttpConnection {
 public:
  static constexpr int kMaxRequests = 100;
  static constexpr Millis kMaxAge{60'000};

  // `clock` gives the connection's age (monotonic time); network waits use real time.
  explicit HttpConnection(const Clock& clock);
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  // POSTs `body` to `url` (http:// or https://) and returns the answer's status. Errors:
  // "push.url" for a URL it cannot use, "push.failed" for lookup, connect, TLS or
  // exchange failures and for `timeout` passing first.
  Result<int> post(const std::string& url, const std::string& body, const HttpHeaders& headers,
                   Millis timeout);
  // The same for any method ("GET", "POST", ...), with the whole answer.
  Result<HttpAnswer> send(std::string_view method, const std::string& url, const std::string& body,
                          const HttpHeaders& headers, Millis timeout);

 private:
  struct Target;   // what a URL names
  struct Request;  // the POST, as Beast writes it
  struct Link;     // one open connection
  struct Attempt;  // what one try came to

  static Result<Target> parse_target(const std::string& url);
  // One try on link_, opening it first when there is none.
  Attempt attempt(const Target& target, const Request& request,
                  std::chrono::steady_clock::time_point deadline);

  const Clock& clock_;
  HostLookup lookup_;
  std::unique_ptr<Link> link_;  // null: none open
};

}  // namespace trainwatch::net
