// Asking ranks for their Python stacks without stopping them (docs/training.md, "Stacks on
// a hang"). At init() the trainwatch module registers faulthandler on a signal (SIGUSR2 by
// default, TRAINWATCH_STACK_SIGNAL) to append a dump of every thread to its stack file,
//   TOP/<uid>/<job>.<pid>.stack   first line "trainwatch-stack 1 signal=12"
// and chains any handler the program had. The agent signals only a process that both has
// that file and still catches that signal (SigCgt in /proc/PID/status): a rank that never
// registered, or whose handler was replaced by the default, is never sent a signal that
// would kill it. Then it reads what was appended, up to kMaxStackDumpBytes.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/python_stack.h"

namespace trainwatch::agent {

// A file grown past this (a program that dumps on its own signal too) is cut back to its
// header before the next request, so it never fills /dev/shm.
inline constexpr off_t kMaxStackFileBytes = 1 << 20;
// How long a capture waits for the dumps: faulthandler writes from the signal handler, in
// well under a millisecond for a 50-frame stack; a rank that takes longer is not waited for.
inline constexpr Millis kStackWait{300};

std::string stack_file_path(const std::string& top, uid_t uid, std::string_view job, int32_t pid);

// "trainwatch-stack 1 signal=12\n..." -> 12; 0 when the text does not start with a header.
int stack_signal_from_header(std::string_view text);

// Whether /proc/PID/status's SigCgt mask says the process catches `signal`.
bool catches_signal(std::string_view status_text, int signal);

struct StackTarget {
  int32_t pid = 0;
  uid_t uid = 0;
  std::string path;  // stack_file_path()
};

struct StackCapture {
  std::shared_ptr<const PyStack> stack;  // null when none came
  std::string note;                      // why not, in a few words ("" when a stack came)
};

// Signals every target that registered, then collects each one's dump, waiting at most
// kStackWait in all. One result per target, in order. Real time: it waits for other processes.
std::vector<StackCapture> capture_stacks(const std::vector<StackTarget>& targets,
                                         const std::string& proc_root);

}  // namespace trainwatch::agent
