// BucketTable: one token bucket per key (a client address, a channel name) in a table of
// bounded size. Each bucket holds up to `burst` units and gets one back every
// `refill_every`; a use takes one unit, and an empty bucket says how long until the next.
//
// Bound: at most `max_keys` buckets. A bucket that has refilled to `burst` is forgotten
// when room is needed (a fresh one would be the same), at most one sweep per
// `refill_every`. When every bucket in the table is still draining, keys not in it share
// one overflow bucket with the same limits: a flood from more keys than the table holds
// is limited as if it came from one key, and the table never grows.
//
// Threading: every call is safe from any thread (one mutex, held for a map lookup and a
// few arithmetic operations; a sweep walks the table once).
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "core/clock.h"

namespace trainwatch::auth {

struct BucketLimits {
  double burst = 10;           // units a key may use at once
  Millis refill_every{6'000};  // one unit comes back this often
  size_t max_keys = 10'000;    // buckets kept; beyond, the overflow bucket
};

class BucketTable {
 public:
  explicit BucketTable(BucketLimits limits);

  // Takes one unit from `key`'s bucket: nullopt when there was one, else how long until
  // one is back (nothing is taken then).
  std::optional<Millis> take(std::string_view key, MonoTime now);
  // How long until `key`'s bucket has a unit, without taking one; nullopt: it has one now.
  std::optional<Millis> wait_for(std::string_view key, MonoTime now) const;

  size_t size() const;
  const BucketLimits& limits() const { return limits_; }

 private:
  struct Bucket {
    double units = 0;
    MonoTime updated{};
  };
  // Units in `b` at `now`, counting what refilled since it was last updated.
  double units_at(const Bucket& b, MonoTime now) const;
  std::optional<Millis> wait_from(double units) const;
  // The bucket of `key`, created when there is room (after a sweep), else the overflow.
  Bucket& bucket_for(std::string_view key, MonoTime now);

  const BucketLimits limits_;
  mutable std::mutex mu_;
  std::map<std::string, Bucket, std::less<>> buckets_;
  Bucket overflow_;
  std::optional<MonoTime> last_sweep_;
};

}  // namespace trainwatch::auth
