// Where a rank is while its job stalls, and which rank is the odd one out.
//
// When every rank stops at the same step, each per-rank counter reads the same; what tells
// the culprit from the ranks waiting for it is where each one is. From the best evidence a
// report carries (docs/failure-modes.md, "A rank stuck outside the collective"):
//   1. its Python stack (the agent asks for it when the step is overdue): the innermost
//      frame of the program's own code, and whether a torch.distributed / DeepSpeed
//      communication call is on the stack (then it is waiting in a collective);
//      When it waits on its DataLoader (or a multiprocessing queue) and the agent took its
//      workers' stacks too, the place is the busy worker's: "waiting for DataLoader worker
//      (pid N) in __getitem__ (data.py:12)";
//   2. else the system call its main thread is blocked in (/proc/PID/syscall).
// The ranks in a collective wait for the ones that are not. When every rank is in a
// collective but in different ones, the ranks that entered the odd one out are the
// culprit of a mismatch (PyTorch's flight recorder calls it the first mismatched
// collective). Without stacks, a place that only a minority of ranks share is the odd one
// out. Pure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "jobs/report.h"

namespace trainwatch::jobs {

struct RankPlace {
  enum class Kind { kUnknown, kCollective, kElsewhere };
  std::string
      text;  // "in fetch_next_shard (data.py:31)", "in all_reduce (train.py:57)", "in clock_nanosleep"
  Kind kind = Kind::kUnknown;  // kUnknown when only the system call is known
  std::string call;            // the function the program called there: "all_reduce", "barrier"
};

// Whether ranks waiting at this place wait for work their peers do on purpose (a barrier
// while rank 0 evaluates or logs), rather than for the data of a collective.
bool is_barrier(const RankPlace& place);

// Where the report says the rank is; nullopt when it carries neither stack nor system call.
std::optional<RankPlace> place_of(const RankReport& r);

struct PlaceGroup {
  RankPlace place;
  std::vector<int> ranks;  // ascending
};

struct Whereabouts {
  std::vector<PlaceGroup> groups;  // by place, in order of their lowest rank
  std::optional<size_t> culprit;   // the group the others wait for, when one can be named
  // Every rank whose place is known waits in a collective, but not all in the same one
  // (another call, or the same call at another line): a collective mismatch. The culprit
  // is then the place fewest ranks share, when one does.
  bool mismatch = false;
};

// Groups the ranks (rank, its last report) by place, leaving out ranks whose place is
// unknown, and names the culprit group.
Whereabouts whereabouts(const std::vector<std::pair<int, const RankReport*>>& ranks);

}  // namespace trainwatch::jobs
