// RecentBuckets: token buckets keyed by string, at most `max_keys` of them, the least
// recently used forgotten first. Unlike BucketTable (auth/bucket_table.h) there is no
// shared overflow bucket: a key that arrives when the table is full evicts the key
// touched longest ago and starts with a full bucket of its own, so a flood from many
// keys can never drain a bucket some other key depends on.
//
// The price, stated where the table is used: a key evicted while its bucket was still
// draining comes back with a full one. evicted_draining() counts those evictions, so an
// operator can see when the bound is too small for the traffic.
//
// Not thread-safe: the owner holds a lock around every call (auth/guess_throttle.h).
// Every call is O(log n) (one map lookup, one list splice).
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/clock.h"

namespace trainwatch::auth {

struct BucketShape {
  double burst = 10;           // units a key has at once
  Millis refill_every{6'000};  // one unit comes back this often
  size_t max_keys = 65'536;    // keys remembered; beyond, the least recently used goes
};

class RecentBuckets {
 public:
  explicit RecentBuckets(BucketShape shape) : shape_(shape) {}

  // Units `key` has at `now` (a key not in the table has a full bucket).
  double units(std::string_view key, MonoTime now) const;
  // Sets `key`'s units at `now` (clamped to [0, burst]) and marks it most recently used;
  // adds the key, evicting the least recently used one when the table is full.
  void set(std::string_view key, double units, MonoTime now);
  // How long until a bucket holding `units` has a whole unit; nullopt: it has one now.
  std::optional<Millis> wait_from(double units) const;

  size_t size() const { return by_key_.size(); }
  uint64_t evicted_draining() const { return evicted_draining_; }
  const BucketShape& shape() const { return shape_; }

 private:
  struct Entry {
    double units = 0;
    MonoTime updated{};
    std::list<std::string>::iterator recency;  // this key's place in recency_
  };
  double units_of(const Entry& e, MonoTime now) const;

  const BucketShape shape_;
  std::map<std::string, Entry, std::less<>> by_key_;
  std::list<std::string> recency_;  // most recently used first
  uint64_t evicted_draining_ = 0;
};

}  // namespace trainwatch::auth
