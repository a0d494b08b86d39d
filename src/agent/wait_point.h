// Where a rank's main thread waits, from two cheap /proc files that need neither a signal
// nor a ptrace stop: /proc/PID/syscall (the system call it is blocked in) and
// /proc/PID/wchan (the kernel function it sleeps in). They tell apart ranks whose every
// other field is the same: in a stalled gloo job the ranks waiting in all_reduce sit in
// futex, the one stuck in a Python time.sleep in clock_nanosleep.
// Both need the right to ptrace the process (the same user, or root); without it they are
// empty, never an error.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace trainwatch::agent {

struct WaitPoint {
  std::string syscall;  // "futex", "clock_nanosleep", "pause"; "running"; "" unknown
  std::string wchan;    // "futex_wait_queue", "hrtimer_nanosleep"; "" unknown or none
};

// The text of /proc/PID/syscall: "202 0x7f.. 0x80 ..." blocked in syscall 202; "running";
// "-1 0x.. 0x.." blocked outside a syscall. "" for anything else.
std::string syscall_from_proc(std::string_view text);

// The kernel's name of a system call number on this architecture ("pause" for 34 on
// x86-64), or "syscall N" for a number the kernel's headers do not name.
std::string syscall_name(long number);

WaitPoint read_wait_point(int32_t pid, const std::string& proc_root);

}  // namespace trainwatch::agent
