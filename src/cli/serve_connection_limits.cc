#include "cli/serve_connection_limits.h"

#include "alerting/dispatcher.h"
#include "http/connection_budget.h"

namespace trainwatch::cli {

namespace {
// Descriptors reserved besides client connections. Generous on purpose: a reserve too
// small turns into failed checks of healthy targets, one too large costs a few slots.
constexpr uint64_t kFdsBase = 64;         // std streams, listener, signal pipe, logs, /proc reads
constexpr uint64_t kFdsPerIoContext = 2;  // its epoll and its eventfd
constexpr uint64_t kFdsForStore = 16;     // SQLite database, WAL, shared memory, journals
// A curl transfer: its socket plus the threaded resolver's socket pair. A TCP check uses
// one; the larger figure covers both.
constexpr uint64_t kFdsPerCheck = 3;
constexpr uint64_t kFdsPerDelivery = 3;
}  // namespace

ServeConnectionLimits serve_connection_limits(const Config& config, uint64_t fd_limit, int http_threads) {
  // One delivery in flight per channel, plus the test sends (alerting/dispatcher.h).
  const uint64_t deliveries = config.notifications.size() + alerting::Dispatcher::kMaxTestsInFlight;
  // The engine's io_context, the alert dispatcher's and one per HTTP thread.
  const uint64_t io_contexts = static_cast<uint64_t>(http_threads) + 2;
  ServeConnectionLimits out;
  out.reserved_fds = kFdsBase + kFdsPerIoContext * io_contexts + kFdsForStore +
                     kFdsPerCheck * static_cast<uint64_t>(config.server.max_checks_in_flight) +
                     kFdsPerDelivery * deliveries;
  const http::ConnectionBudget budget =
      http::connection_budget(fd_limit, out.reserved_fds, static_cast<size_t>(config.server.max_connections));
  out.max_connections = budget.max_connections;
  out.starved = budget.starved;
  out.log_line = "http: at most " + std::to_string(out.max_connections) + " client connections (" +
                 std::to_string(config.server.max_connections_per_address) + " per address); " +
                 std::to_string(out.reserved_fds) + " of " + std::to_string(fd_limit) +
                 " descriptors kept for checks (server.max_checks_in_flight " +
                 std::to_string(config.server.max_checks_in_flight) + "), the store and alerts";
  if (out.starved) {
    out.log_line +=
        "; too few left for clients: checks may fail for lack of descriptors until the limit is raised";
  }
  return out;
}

}  // namespace trainwatch::cli
