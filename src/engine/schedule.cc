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

Millis takeover_stagger(size_t index, size_t count, Millis interval) {
  if (count == 0) return Millis(0);
  const int64_t window = std::min(interval / 2, kTakeoverSpread).count();
  return Millis(window * static_cast<int64_t>(index % count) / static_cast<int64_t>(count));
}

HandoverSlots handover_slots(MonoTime due, Millis interval, MonoTime now, std::optional<Millis> since_check,
                             const Handover& rule) {
  const MonoTime earliest = now + rule.gap;
  HandoverSlots slots{due < earliest ? next_due(due, interval, earliest) : due, std::nullopt};
  if (!since_check) return slots;
  const Millis since = *since_check;
  // Unchecked since the whole installation stopped: it waits for this replica's slot.
  if (since >= 2 * interval + rule.takeover_window) return slots;
  MonoTime theirs = now + (interval - since);
  if (theirs + rule.unseen <= now) {
    theirs = earliest + rule.stagger;  // it missed a slot: its owner stopped
  } else if (theirs < earliest) {
    // (A slot passed within `unseen` was checked, unseen yet: the owner's next one.)
    theirs = next_due(theirs, interval, earliest);
  }
  // This replica's slot comes first, and half an interval after the owner's slot before.
  if (slots.mine <= theirs && slots.mine - (theirs - interval) >= interval / 2) return slots;
  slots.theirs = theirs;
  return slots;
}

MonoTime slot_after_handover(MonoTime due, Millis interval, MonoTime theirs) {
  const MonoTime mine = due > theirs ? due : next_due(due, interval, theirs);
  return mine - theirs < interval / 2 ? mine + interval : mine;
}

}  // namespace trainwatch::engine
