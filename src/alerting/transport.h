// Transport: the Sender of the running program: sends one OutboundRequest (HTTP or SMTP)
// on the shared curl-multi driver (net/curl_multi.h) and reports what came back. Knows
// nothing about retries.
//
// Threading: construct, send() and destroy on the io_context's thread; `done` runs there,
// never inline from send(). Destroying the transport abandons requests in flight (their
// `done` is not called).
//
// Bounds: each request has its own timeout (OutboundRequest::timeout); a response body
// over kMaxResponseBytes aborts the transfer and reports "response body over 64 KiB"
// (nothing more is read or kept); the error text is at most kMaxErrorChars.
//
// Targets on this host (net/local_address.h: loopback, link-local, this host's own
// addresses) are refused before any connection is made, whatever name led there, unless
// the server allows them (server.allow_local_channel_targets): a refused send fails for
// good, its error naming the address and the setting. A channel must not be a way to
// reach what listens only for this host: the server's own API, a database, a cloud's
// metadata service.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>

#include "alerting/sender.h"

namespace trainwatch::alerting {

class Transport final : public Sender {
 public:
  static constexpr size_t kMaxResponseBytes = 64 * 1024;
  static constexpr size_t kMaxErrorChars = 300;

  Transport(boost::asio::io_context& io, bool allow_local_targets);
  ~Transport() override;

  void send(const OutboundRequest& request, std::function<void(SendOutcome)> done) override;
  size_t in_flight() const;
  // From any thread (a reload); applies to the sends that start after it.
  void allow_local_targets(bool allow);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace trainwatch::alerting
