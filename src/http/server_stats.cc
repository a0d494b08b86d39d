#include "http/server_stats.h"

namespace trainwatch::http {

namespace {
double read(const std::atomic<uint64_t>& counter) {
  return static_cast<double>(counter.load(std::memory_order_relaxed));
}
}  // namespace

void write_server_metrics(const ServerStats& stats, PrometheusWriter& w) {
  w.family("trainwatch_http_connections", "gauge", "Client connections open now.");
  w.sample("trainwatch_http_connections", {}, read(stats.connections));
  w.family("trainwatch_http_max_connections", "gauge",
           "The bound on client connections: server.max_connections, lowered to fit the descriptor limit.");
  w.sample("trainwatch_http_max_connections", {}, read(stats.max_connections));
  w.family("trainwatch_http_connections_refused_total", "counter",
           "New connections closed at once, by reason.");
  w.sample("trainwatch_http_connections_refused_total", {{"reason", "per_address"}},
           read(stats.refused_per_address));
  w.sample("trainwatch_http_connections_refused_total", {{"reason", "max_connections"}},
           read(stats.refused_max_connections));
  w.family("trainwatch_http_connections_closed_total", "counter",
           "Open connections closed by the server, by reason.");
  w.sample("trainwatch_http_connections_closed_total", {{"reason", "room_for_new"}},
           read(stats.closed_for_room));
  w.sample("trainwatch_http_connections_closed_total", {{"reason", "request_timeout"}},
           read(stats.closed_request_timeout));
  w.sample("trainwatch_http_connections_closed_total", {{"reason", "idle_timeout"}},
           read(stats.closed_idle_timeout));
  w.family("trainwatch_http_accept_failures_total", "counter",
           "accept() failures such as EMFILE; each pauses accepting for 10-100 ms.");
  w.sample("trainwatch_http_accept_failures_total", {}, read(stats.accept_failures));
}

}  // namespace trainwatch::http
