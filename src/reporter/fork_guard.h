// Which process a handle belongs to, without a system call per step. A handle reports for
// the process that opened it; a child made by fork(2) (a DataLoader worker, a helper)
// inherits the handle and the mapping, but its reports would land in the parent's slot and
// its exit would read as the parent's. So every write first compares the handle's pid with
// this process's pid, which is read once and then kept current by a pthread_atfork child
// handler (glibc's fork runs it in the child before fork returns there).
#pragma once

#include <atomic>
#include <cstdint>

namespace trainwatch::reporter {

// This process's pid: getpid() at the first call, then refreshed in each forked child.
// Cheap (one relaxed load) after the first call; never a system call on that path.
int32_t current_pid();

// Registers the atfork handler (once per process) and returns current_pid(). Called at
// open, which may make system calls, so current_pid() on the step path never has to.
int32_t watch_forks();

}  // namespace trainwatch::reporter
