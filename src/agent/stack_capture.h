// Asking ranks for their Python stacks without stopping them (docs/training.md, "Stacks on
// a hang"). At init() the trainwatch module sets up a dump of every thread into its stack
// file, TOP/<uid>/<job>.<pid>.stack, whose first line says how to ask for one:
//   "trainwatch-stack 2 request=fifo"  (the default) write one byte to the FIFO beside it,
//       <job>.<pid>.stackreq, which the module's native sampler thread reads: no signal
//       reaches the rank, so no system call of it is interrupted; each dump ends with
//       kStackDumpEnd;
//   "trainwatch-stack 1 signal=12"     (TRAINWATCH_STACK_SIGNAL) send that signal, on which
//       faulthandler is registered.
// The agent signals only a process that both has that file and still catches that signal
// (SigCgt in /proc/PID/status): a rank that never registered, or whose handler was replaced
// by the default, is never sent a signal that would kill it. It writes only to a FIFO of the
// rank's user that a reader holds open. Then it reads what was appended, up to
// kMaxStackDumpBytes.
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
// How long a capture waits for the dumps: faulthandler or the sampler thread writes one in
// well under a millisecond for a 50-frame stack; a rank that takes longer is not waited for.
inline constexpr Millis kStackWait{300};

std::string stack_file_path(const std::string& top, uid_t uid, std::string_view job, int32_t pid);

// The line the sampler thread writes after each dump, so the agent knows a dump is whole
// without waiting for the file to stop growing (a writer descheduled mid-dump looks done).
inline constexpr std::string_view kStackDumpEnd = "trainwatch-stack end\n";

// The request FIFO beside a stack file: "<stack path>req".
std::string stack_request_path(const std::string& stack_path);

// How a stack file's header says to ask for a dump.
struct StackRequest {
  enum class Way { kNone, kFifo, kSignal };
  Way way = Way::kNone;  // kNone: the text does not start with a header this agent knows
  int signal = 0;        // with kSignal, 1..64
};
// "trainwatch-stack 2 request=fifo\n..." -> fifo; "trainwatch-stack 1 signal=12\n..." -> signal 12.
StackRequest stack_request_from_header(std::string_view text);

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

// Asks every target that registered (FIFO or signal, as its header says), then collects each one's dump,
// waiting at most kStackWait in all. One result per target, in order. Real time: it waits for other
// processes.
std::vector<StackCapture> capture_stacks(const std::vector<StackTarget>& targets,
                                         const std::string& proc_root);

}  // namespace trainwatch::agent
