#include "http/connection_budget.h"

#include <algorithm>

namespace trainwatch::http {

ConnectionBudget connection_budget(uint64_t fd_limit, uint64_t reserved_fds, size_t configured_max) {
  const uint64_t left = fd_limit > reserved_fds ? fd_limit - reserved_fds : 0;
  ConnectionBudget budget;
  budget.starved = left < kMinConnections;
  const uint64_t allowed = std::max<uint64_t>(left, kMinConnections);
  budget.max_connections = static_cast<size_t>(std::min<uint64_t>(allowed, configured_max));
  return budget;
}

}  // namespace trainwatch::http
