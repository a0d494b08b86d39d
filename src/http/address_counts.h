// AddressCounts: open connections per client address, so one address (one host, one
// misbehaving client) cannot take every connection slot.
//
// Bound: at most `cap` open connections per address; try_add() refuses the next one and
// the listener closes it at once (counted in ServerStats::refused_per_address).
//
// Thread-safety: every method may be called from any thread (a mutex, taken once when a
// connection opens and once when it closes, never per request).
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>

namespace trainwatch::http {

class AddressCounts {
 public:
  explicit AddressCounts(size_t cap) : cap_(cap) {}

  // Counts one more connection from `address`; false (nothing counted) at the cap.
  bool try_add(const std::string& address);
  // Forgets one connection counted by try_add(); an address at 0 is dropped from the map.
  void remove(const std::string& address);

 private:
  const size_t cap_;
  std::mutex mu_;
  std::unordered_map<std::string, size_t> open_;
};

}  // namespace trainwatch::http
