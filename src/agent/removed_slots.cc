#include "agent/removed_slots.h"

namespace trainwatch::agent {

void RemovedSlots::seen(const Key& key, const RankView& view, const std::string& path) {
  if (!view.alive) {
    last_.erase(key);
    return;
  }
  last_[key] = Last{view.slot.rank, view.slot.pid, view.slot.start_ticks, path, true};
}

void RemovedSlots::unreadable(uid_t uid) {
  for (auto it = last_.lower_bound({uid, 0}); it != last_.end() && it->first.first == uid; ++it)
    it->second.seen_now = true;
}

std::vector<RemovedSlot> RemovedSlots::end_sample(const Alive& alive) {
  std::vector<RemovedSlot> removed;
  for (auto it = last_.begin(); it != last_.end();) {
    Last& l = it->second;
    if (std::exchange(l.seen_now, false)) {
      ++it;
      continue;
    }
    if (!alive(l.pid, l.start_ticks)) {
      it = last_.erase(it);
      continue;
    }
    const std::string rank = "rank " + std::to_string(l.rank);
    removed.push_back({l.rank, l.pid, l.path,
                       rank + " (pid " + std::to_string(l.pid) + ") still runs, but its slot file " + l.path +
                           " was removed or replaced under it (something deleted the slot folder or file "
                           "while the job ran): this agent cannot see its steps, status or a hang until " +
                           rank + " starts again"});
    ++it;
  }
  return removed;
}

}  // namespace trainwatch::agent
