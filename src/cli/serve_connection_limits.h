// How many client connections `trainwatch serve` may hold: server.max_connections, lowered
// to what the descriptor limit leaves once every other use of descriptors is reserved,
// so a check or an alert never fails because clients hold the descriptors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "config/config.h"

namespace trainwatch::cli {

struct ServeConnectionLimits {
  size_t max_connections = 0;
  uint64_t reserved_fds = 0;
  bool starved = false;  // the reserve ate the limit: checks may fail until it is raised
  std::string log_line;  // what was decided, for the start-up log
};

ServeConnectionLimits serve_connection_limits(const Config& config, uint64_t fd_limit, int http_threads);

}  // namespace trainwatch::cli
