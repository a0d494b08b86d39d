#include "engine/schedule.h"

#include <algorithm>

namespace trainwatch::engine {

Millis first_check_offset(size_t index, size_t count, Millis interval) {
  if (count == 0) return Millis(0);
  const int64_t window = std::min(interval, kFirstCheckWindow).count();
  return Millis(window * static_cast<int64_t>(index % count) / static_cast<int64_t>(count));
}

MonoTime next_due(MonoTime due, Millis interval, MonoTime now) {
  if (interval.count() <= 0) return now;
  MonoTime next = due + interval;
  if (next > now) return next;
  // Behind by one or more whole slots: jump to the first slot after now.
  const auto behind = std::chrono::duration_cast<Millis>(now - next).count();
  return next + interval * (behind / interval.count() + 1);
}

MonoTime next_due_after_start(MonoTime due, Millis interval, MonoTime now) {
  const MonoTime next = next_due(due, interval, now);
  return next - now < interval / 2 ? next + interval : next;
}

}  // namespace trainwatch::engine
