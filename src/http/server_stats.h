// ServerStats: what the HTTP server counts about its connections, for /metrics.
// Written by the server's threads (relaxed atomics), read by whoever renders /metrics.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/prometheus.h"

namespace trainwatch::http {

struct ServerStats {
  std::atomic<uint64_t> connections{0};      // open now
  std::atomic<uint64_t> max_connections{0};  // the bound in force (ServerOptions::max_connections)
  // New connections closed at once: over max_connections_per_address, or over
  // max_connections with no connection waiting for a request to make room.
  std::atomic<uint64_t> refused_per_address{0};
  std::atomic<uint64_t> refused_max_connections{0};
  // Open connections closed by the server: the one waiting longest for a request, to make
  // room for a new one at max_connections; a request not complete in request_timeout; a
  // keep-alive connection silent for idle_timeout.
  std::atomic<uint64_t> closed_for_room{0};
  std::atomic<uint64_t> closed_request_timeout{0};
  std::atomic<uint64_t> closed_idle_timeout{0};
  // accept() failures (EMFILE, ENFILE, ...), each followed by a pause (http/accept_backoff.h).
  std::atomic<uint64_t> accept_failures{0};
};

// The trainwatch_http_* families.
void write_server_metrics(const ServerStats& stats, PrometheusWriter& w);

}  // namespace trainwatch::http
