// How many client connections the server may hold, given the process's descriptor limit
// and the descriptors it needs for everything else.
//
// Every connection is one descriptor, and so is every check's socket, every alert
// delivery's and the store's files. If clients may take them all, a check of a healthy
// target fails with "could not connect" and an alert cannot go out. So the connections
// get what is left of the limit after `reserved_fds`, and never more than the configured
// maximum.
//
// Bound: at least kMinConnections even when the reserve eats the whole limit (`starved`
// is then set and the caller says so: checks may fail for lack of descriptors until the
// limit is raised).
#pragma once

#include <cstddef>
#include <cstdint>

namespace trainwatch::http {

struct ConnectionBudget {
  size_t max_connections = 0;
  bool starved = false;  // the reserve did not leave kMinConnections
};

inline constexpr size_t kMinConnections = 32;

ConnectionBudget connection_budget(uint64_t fd_limit, uint64_t reserved_fds, size_t configured_max);

}  // namespace trainwatch::http
