// When checks start. Pure arithmetic, so the spreading and catching-up rules are tested
// without timers.
//
// First checks are spread evenly over min(interval, kFirstCheckWindow) so 10,000 monitors
// started together never fire at once; after that each monitor runs at a fixed rate
// (due += interval). A monitor whose check is still running when it is due again skips
// that slot rather than piling up checks: the next due time is the first slot after now.
#pragma once

#include <cstddef>

#include "core/clock.h"

namespace trainwatch::engine {

inline constexpr Millis kFirstCheckWindow{10'000};

// Offset of the first check of the index-th of `count` monitors with this interval.
Millis first_check_offset(size_t index, size_t count, Millis interval);

// The next due time after `due`, skipping slots already in the past at `now`.
MonoTime next_due(MonoTime due, Millis interval, MonoTime now);

}  // namespace trainwatch::engine
