// DatabaseClock: the time of an installation whose replicas share one database.
//
// Every time a replica stamps (a check result, an incident's start and end, a ping, an
// alert's `at`) is compared with times other replicas stamped: the owner of a heartbeat
// reads pings that any replica answered. So the replicas keep one time, the database's,
// read at each beat and carried forward between beats by this process's monotonic clock.
// A host whose wall clock is stepped (a wrong NTP server, a VM restored from a snapshot,
// `date -s`) then stamps nothing wrong, and needs no special case anywhere else.
//
// Until its first reading it is the local wall clock, which is also all it ever is for a
// serve alone on SQLite (nothing calls observe()).
//
// Thread-safety: system_time() and monotonic_time() from any thread; observe() from one.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>

#include "core/clock.h"

namespace trainwatch::cluster {

class DatabaseClock final : public Clock {
 public:
  explicit DatabaseClock(const Clock& local) : local_(local) {}

  SystemTime system_time() const override;
  MonoTime monotonic_time() const override { return local_.monotonic_time(); }

  // The database's clock read `database_now`, give or take `uncertainty` (half the round
  // trip that read it), at `local_now` on the monotonic clock. The reading replaces the
  // current one only when the current one lies outside what the reading allows, so the
  // time does not jitter by a round trip at every beat.
  void observe(SystemTime database_now, MonoTime local_now, std::chrono::microseconds uncertainty);

  // How far the host's wall clock is ahead of this clock (negative: behind). Zero before
  // the first reading.
  Millis wall_clock_ahead() const;

 private:
  static constexpr int64_t kUnread = std::numeric_limits<int64_t>::min();

  const Clock& local_;
  // The database's time minus the monotonic clock, in the system clock's ticks; kUnread
  // before the first reading.
  std::atomic<int64_t> offset_{kUnread};
};

}  // namespace trainwatch::cluster
