// Native frames for ranks whose step is overdue (docs/training.md, "Stacks on a hang"):
// runs elfutils' `eu-stack -p PID` beside the Python capture (stack_capture.h) and parses
// what it prints (core/native_stack.h).
//
// eu-stack ptrace-attaches: every thread of the rank stops while it walks the stacks
// (under a millisecond for a small process), then it detaches. So:
//   1. a rank stopped on purpose (state T or t) is never traced: attaching would not stop
//      it, but detaching could let a debugger's stop go;
//   2. every run has a deadline; past it eu-stack is killed (SIGKILL) and reaped;
//   3. after a run that did not end cleanly (killed, or an exit code above 1: 1 only says
//      some frames were cut), a rank now stopped that was not stopped before is sent
//      SIGCONT: the kernel detaches a dead tracer's tracees, but one caught in the stop
//      the attach asked for can stay stopped.
// Failures (a missing tool, ptrace refused by kernel.yama.ptrace_scope) become notes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/native_stack.h"

namespace trainwatch::agent {

// Every run at once, all within this: the sampler waits for it, not the probes (they run
// on their own workers), and /health serves the previous sample meanwhile.
inline constexpr Millis kNativeDeadline{2'000};

// `name` when it holds a '/', else the first executable `DIR/name` for DIR in `path_env`
// (PATH's syntax; an empty entry is the current directory); "" when there is none.
std::string find_on_path(std::string_view name, std::string_view path_env);

struct NativeCapture {
  std::shared_ptr<const NativeStack> stack;  // null when none came
  std::string note;                          // why not, or what went wrong ("" when all went well)
};

// Runs `tool -p PID -m -n kMaxNativeFrames+1` for every pid at once, each without a shell,
// with stdout read up to kMaxStackDumpBytes, and waits at most `deadline` in all. One
// result per pid, in order. Real time: it waits for other processes.
std::vector<NativeCapture> capture_native_stacks(const std::string& tool, const std::vector<int32_t>& pids,
                                                 const std::string& proc_root,
                                                 Millis deadline = kNativeDeadline);

}  // namespace trainwatch::agent
