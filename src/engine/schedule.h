// When checks start. Pure arithmetic, so the spreading and catching-up rules are tested
// without timers.
//
// First checks are spread evenly over min(interval, kFirstCheckWindow) so 10,000 monitors
// started together never fire at once; after that each monitor runs at a fixed rate
// (due += interval). A monitor whose check is still running when it is due again skips
// that slot rather than piling up checks: the next due time is the first slot after now.
// A check that started late skips a slot that would follow it within half an interval.
#pragma once

#include <cstddef>

#include "core/clock.h"

namespace trainwatch::engine {

inline constexpr Millis kFirstCheckWindow{10'000};

// Offset of the first check of the index-th of `count` monitors with this interval.
Millis first_check_offset(size_t index, size_t count, Millis interval);

// The next due time after `due`, skipping slots already in the past at `now`.
MonoTime next_due(MonoTime due, Millis interval, MonoTime now);

// The next due time after a check of the slot `due` started at `now`: the next slot, unless
// that comes within half an interval of `now`, then the one after. A check that started
// late (the process was paused or starved of CPU) is thus not followed by another at once:
// the target never sees two checks of one monitor closer than half its interval.
MonoTime next_due_after_start(MonoTime due, Millis interval, MonoTime now);

}  // namespace trainwatch::engine
