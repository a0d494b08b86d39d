#include "auth/recent_buckets.h"

#include <algorithm>
#include <cmath>

namespace trainwatch::auth {

double RecentBuckets::units_of(const Entry& e, MonoTime now) const {
  if (now <= e.updated) return e.units;
  const double refilled = std::chrono::duration<double>(now - e.updated) / shape_.refill_every;
  return std::min(shape_.burst, e.units + refilled);
}

double RecentBuckets::units(std::string_view key, MonoTime now) const {
  auto it = by_key_.find(key);
  return it == by_key_.end() ? shape_.burst : units_of(it->second, now);
}

void RecentBuckets::set(std::string_view key, double units, MonoTime now) {
  units = std::clamp(units, 0.0, shape_.burst);
  auto it = by_key_.find(key);
  if (it == by_key_.end()) {
    if (by_key_.size() >= shape_.max_keys && !recency_.empty()) {
      auto oldest = by_key_.find(recency_.back());
      if (units_of(oldest->second, now) < shape_.burst) ++evicted_draining_;
      by_key_.erase(oldest);
      recency_.pop_back();
    }
    recency_.emplace_front(key);
    it = by_key_.emplace(std::string(key), Entry{0, now, recency_.begin()}).first;
  } else {
    recency_.splice(recency_.begin(), recency_, it->second.recency);
  }
  it->second.units = units;
  it->second.updated = std::max(it->second.updated, now);
}

std::optional<Millis> RecentBuckets::wait_from(double units) const {
  if (units >= 1) return std::nullopt;
  // Rounded up, so a caller that waits this long finds a whole unit.
  const double ms = std::ceil((1 - units) * static_cast<double>(shape_.refill_every.count()));
  return Millis(std::max<int64_t>(1, static_cast<int64_t>(ms)));
}

}  // namespace trainwatch::auth
