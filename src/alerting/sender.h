// Sender: what delivers one OutboundRequest and says what came back. The dispatcher
// sends through this and nothing else; in serve it is the Transport (curl on asio).
//
// Contract: `done` is called exactly once, later, on the thread that drives the sender
// (never inline from send()), unless the sender is destroyed first: then requests in
// flight are abandoned and their `done` is never called.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "alerting/provider.h"

namespace trainwatch::alerting {

struct SendOutcome {
  bool transport_ok = false;               // an answer came back (any HTTP status; SMTP accepted)
  bool permanent = false;                  // a transport failure retrying cannot fix (SMTP 5xx, login denied)
  int status = 0;                          // HTTP status, or the last SMTP reply code
  std::optional<std::string> retry_after;  // the Retry-After header, as sent
  std::string error;                       // for people; empty on success; never holds the URL or a password
  bool refused_here = false;               // never sent: the target is on this host (transport.h)
  double latency_ms = 0;
};

class Sender {
 public:
  virtual ~Sender() = default;
  virtual void send(const OutboundRequest& request, std::function<void(SendOutcome)> done) = 0;
};

}  // namespace trainwatch::alerting
