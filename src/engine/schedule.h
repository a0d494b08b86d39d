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
#include <optional>

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

// When a checked monitor taken over at `now` is checked next.
struct HandoverSlots {
  MonoTime mine;                   // this replica's next slot
  std::optional<MonoTime> theirs;  // a check at the last owner's slot first, when it comes first
};

// How a replica takes monitors over: `gap`, the wait before any check (the last owner may
// check until it lets go); `takeover_window`, see below; `stagger`, this monitor's place
// among those taken over together (takeover_stagger), added to a missed slot's check;
// `unseen`, how long after one of its slots the last owner's check of it may still be
// missing from the stored state read at the takeover (the check runs, then is written in
// the background): a slot passed less than this ago was most likely checked, at a moment
// this replica cannot see yet.
struct Handover {
  Millis gap;
  Millis takeover_window;
  Millis stagger{0};
  Millis unseen{0};
};

// A takeover of many monitors whose owner stopped would check them all in one instant,
// a burst a small server behind them (a listen backlog of 5 is common) answers with
// dropped connections: false timeouts. The index-th of `count` monitors taken over
// together checks its missed slot this much after the gap, evenly over
// min(half its interval, kTakeoverSpread).
inline constexpr Millis kTakeoverSpread{1'000};
Millis takeover_stagger(size_t index, size_t count, Millis interval);

// `due`: this replica's slot for the monitor, which ran on while another owned it;
// `since_check`: how long ago its last owner checked it (none: never). The monitor keeps
// this replica's slots, spread like every monitor's first checks (starting every monitor
// taken over at the same moment instead would make them due together at every interval,
// for good), none before now + `gap` (the last owner may check it until it lets go).
// That owner's slot comes first when it died (it missed a slot more than `unseen` ago,
// and was checked less than 2 * interval + `takeover_window` ago: then right after the
// gap), or when its next slot past the gap comes before this replica's, or within half an
// interval after the owner's slot before. A slot passed less than `unseen` ago counts as
// checked: the live owner checked it as it let go, and its result is still on its way to
// the store (checking it again right after the gap was two checks within a second). So no two replicas check
// it within half an interval at a handover, and no monitor waits much longer than an interval between two
// checks when its owner died. One unchecked for longer was stopped with the whole installation: it waits for
// this replica's slot.
HandoverSlots handover_slots(MonoTime due, Millis interval, MonoTime now, std::optional<Millis> since_check,
                             const Handover& rule);

// After the check at the last owner's slot `theirs`: this replica's next slot, unless it
// comes within half an interval of that check (then the one after).
MonoTime slot_after_handover(MonoTime due, Millis interval, MonoTime theirs);

}  // namespace trainwatch::engine
