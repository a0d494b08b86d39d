// RemovedSlots: ranks whose slot vanished while they still run.
//
// A rank never clears its slot (a dead rank's slot stays until another process claims it),
// so a slot the agent read at one sample and cannot find at a later one went with its file
// or its folder: a cleanup of /dev/shm, an `rm -rf` of TRAINWATCH_DIR, or a new file that a
// later rank made in their place. The rank writes on into memory nobody else can see: its
// steps, status and a hang are invisible, while ranks of the new file read as usual. So
// while its process runs (the same pid and start time), every sample names it, its pid and
// the file it was last read from (`slot_removed`: a reason in /health, a note in the node
// report); once the process has exited it is forgotten, as any finished rank is.
//
// A file that is there but cannot be read whole (malformed, shrunk) says so itself
// (slot_file_malformed); its ranks are not called removed.
//
// Bounds: one entry per slot seen running, at most kMaxUserDirs * kSlotCount.
// Threading: the agent's sampler only (under its sample lock).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "agent/node_snapshot.h"

namespace trainwatch::agent {

class RemovedSlots {
 public:
  // (uid of the slot file, slot index)
  using Key = std::pair<uid_t, uint32_t>;
  // Whether the process `pid`, started at `start_ticks`, still runs.
  using Alive = std::function<bool(int32_t pid, uint64_t start_ticks)>;

  // The sample read `view` from the slot `key` of the file at `path`.
  void seen(const Key& key, const RankView& view, const std::string& path);
  // The slot holds no rank any more (found invalid): nothing to say about its going.
  void forget(const Key& key) { last_.erase(key); }
  // The sample found `uid`'s file but could not read it whole: its slots are not removed.
  void unreadable(uid_t uid);
  // Once every file was read: the slots seen running before and not seen at this sample
  // whose process still runs, in key order. Starts the next sample.
  std::vector<RemovedSlot> end_sample(const Alive& alive);

 private:
  struct Last {
    int rank = 0;
    int32_t pid = 0;
    uint64_t start_ticks = 0;
    std::string path;
    bool seen_now = false;
  };
  std::map<Key, Last> last_;
};

}  // namespace trainwatch::agent
