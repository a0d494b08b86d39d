#include "auth/bucket_table.h"

#include <algorithm>
#include <cmath>

namespace trainwatch::auth {

BucketTable::BucketTable(BucketLimits limits) : limits_(limits) { overflow_.units = limits_.burst; }

double BucketTable::units_at(const Bucket& b, MonoTime now) const {
  if (now <= b.updated) return b.units;
  const double refilled = std::chrono::duration<double>(now - b.updated) / limits_.refill_every;
  return std::min(limits_.burst, b.units + refilled);
}

std::optional<Millis> BucketTable::wait_from(double units) const {
  if (units >= 1) return std::nullopt;
  // Rounded up, so a caller that waits this long finds a whole unit.
  const double ms = std::ceil((1 - units) * static_cast<double>(limits_.refill_every.count()));
  return Millis(std::max<int64_t>(1, static_cast<int64_t>(ms)));
}

BucketTable::Bucket& BucketTable::bucket_for(std::string_view key, MonoTime now) {
  if (auto it = buckets_.find(key); it != buckets_.end()) return it->second;
  if (buckets_.size() >= limits_.max_keys && (!last_sweep_ || now - *last_sweep_ >= limits_.refill_every)) {
    last_sweep_ = now;
    std::erase_if(buckets_, [&](const auto& entry) { return units_at(entry.second, now) >= limits_.burst; });
  }
  if (buckets_.size() >= limits_.max_keys) return overflow_;
  return buckets_.emplace(std::string(key), Bucket{limits_.burst, now}).first->second;
}

std::optional<Millis> BucketTable::take(std::string_view key, MonoTime now) {
  std::lock_guard lock(mu_);
  Bucket& b = bucket_for(key, now);
  b.units = units_at(b, now);
  b.updated = std::max(b.updated, now);
  if (auto wait = wait_from(b.units)) return wait;
  b.units -= 1;
  return std::nullopt;
}

std::optional<Millis> BucketTable::wait_for(std::string_view key, MonoTime now) const {
  std::lock_guard lock(mu_);
  auto it = buckets_.find(key);
  // A key not in the table has a full bucket, unless the table is full and it would
  // share the overflow one.
  if (it == buckets_.end())
    return buckets_.size() >= limits_.max_keys ? wait_from(units_at(overflow_, now)) : std::nullopt;
  return wait_from(units_at(it->second, now));
}

size_t BucketTable::size() const {
  std::lock_guard lock(mu_);
  return buckets_.size();
}

}  // namespace trainwatch::auth
