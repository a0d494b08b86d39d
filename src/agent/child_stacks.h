// The child processes of an overdue rank that can be asked for their stacks: a DataLoader
// worker the rank waits on keeps its own stack file, <job>.<childpid>.stack (the trainwatch
// module starts a sampler in each worker; docs/training.md, "Stacks on a hang"). The agent
// asks them together with the rank, so the server can name the worker's frame when the
// rank's own stack only shows it waiting on the worker (jobs/rank_place.h).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "agent/stack_capture.h"

namespace trainwatch::agent {

// At most this many children of one rank are looked at (a loader with more workers is
// seen through its first ones); of them, those with a stack file, at most kMaxChildStacks.
inline constexpr size_t kMaxChildrenScanned = 16;

// The rank's children, from /proc/PID/task/TID/children of each of its threads (a child is
// listed under the thread that forked it); at most `limit`, in the kernel's order.
std::vector<int32_t> child_pids(int32_t pid, const std::string& proc_root, size_t limit);

// The rank's children that have a stack file of the rank's user, as capture targets; at
// most kMaxChildStacks. Children without one (a worker of a program without trainwatch,
// any child that is not a DataLoader worker) are left out, not noted.
std::vector<StackTarget> child_stack_targets(const StackTarget& rank, const std::string& top,
                                             std::string_view job, const std::string& proc_root);

}  // namespace trainwatch::agent
