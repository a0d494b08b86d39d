// PingIngest: from a ping request (token, action, body, source) to a stored ping. Looks
// the token up (constant time), applies the per-URL rate limit, keeps the first
// `ping_body_limit` bytes of the body, and hands the ping to the sink (heartbeat/ping_sink.h),
// whose `done` reports once the ping is committed. Knows nothing of HTTP.
//
// Threading: ingest() may be called from any number of threads at once; configure() from
// any thread. A ping races a reload harmlessly: it uses the index it found.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "config/config.h"
#include "core/clock.h"
#include "core/ping.h"
#include "core/result.h"
#include "heartbeat/ping_request.h"
#include "heartbeat/ping_sink.h"
#include "heartbeat/token_index.h"

namespace trainwatch::heartbeat {

enum class PingOutcome {
  kAccepted,      // committed: 200
  kUnknownToken,  // 404
  kRateLimited,   // 429: this URL is over its rate; nothing stored
  kUnavailable,   // 503: the store refused or failed; the client should retry
};

using PingDone = std::function<void(PingOutcome)>;

struct PingRequest {
  std::string_view token;
  PingAction action;
  std::string_view body;
  std::string source;
  std::string user_agent;
};

class PingIngest {
 public:
  // User agents longer than this are cut: it is a label, not a payload.
  static constexpr size_t kMaxUserAgentBytes = 256;

  // `sink` must outlive the ingest.
  PingIngest(const Clock& clock, PingSink& sink);

  // Rebuilds the token index from the heartbeat monitors of `config` (tokens resolved).
  void configure(const Config& config);

  // Calls `done` exactly once: at once for unknown tokens and rate limits, else from the
  // sink's done (the store's writer thread).
  void ingest(const PingRequest& request, PingDone done);

 private:
  std::shared_ptr<const TokenIndex> index() const;

  const Clock& clock_;
  PingSink& sink_;
  mutable std::mutex mu_;  // guards index_ (the pointer, not what it points to)
  std::shared_ptr<const TokenIndex> index_;
};

}  // namespace trainwatch::heartbeat
