#include "cluster/database_clock.h"

#include <cstdlib>

namespace trainwatch::cluster {
namespace {

using Ticks = SystemTime::duration;

int64_t ticks_of(MonoTime t) { return std::chrono::duration_cast<Ticks>(t.time_since_epoch()).count(); }

}  // namespace

SystemTime DatabaseClock::system_time() const {
  const int64_t offset = offset_.load(std::memory_order_relaxed);
  if (offset == kUnread) return local_.system_time();
  return SystemTime(Ticks(ticks_of(local_.monotonic_time()) + offset));
}

void DatabaseClock::observe(SystemTime database_now, MonoTime local_now,
                            std::chrono::microseconds uncertainty) {
  const int64_t read = database_now.time_since_epoch().count() - ticks_of(local_now);
  const int64_t current = offset_.load(std::memory_order_relaxed);
  const int64_t slack = std::chrono::duration_cast<Ticks>(uncertainty).count();
  if (current != kUnread && std::llabs(read - current) <= slack) return;
  offset_.store(read, std::memory_order_relaxed);
}

Millis DatabaseClock::wall_clock_ahead() const {
  if (offset_.load(std::memory_order_relaxed) == kUnread) return Millis(0);
  return std::chrono::duration_cast<Millis>(local_.system_time() - system_time());
}

}  // namespace trainwatch::cluster
