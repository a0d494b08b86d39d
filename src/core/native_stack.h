// A rank's native (C/C++) stack as `eu-stack -p PID -m -n N` (elfutils) prints it, parsed:
// the agent runs it for a rank whose step is overdue (agent/native_capture.h) and sends the
// result beside the Python stack; the server reads it back from the report.
//
// eu-stack's output, innermost frame first; a frame without a symbol has no name, and the
// module after " - " is there because of -m:
//   PID 10756 - process
//   TID 10756:
//   #0  0x00007f104ea30545 clock_nanosleep@GLIBC_2.2.5 - /usr/lib/x86_64-linux-gnu/libc.so.6
//   #1  0x00000000005d64b4 - /usr/bin/python3.11
//   TID 10758:
//   #0  0x00007f104ea30545 clock_nanosleep@GLIBC_2.2.5 - /usr/lib/x86_64-linux-gnu/libc.so.6
// Pure and bounded like PyStack: any text in, at most kMaxStackThreads threads of
// kMaxNativeFrames frames, each text at most kMaxFrameText.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/fwd.hpp>

#include "core/python_stack.h"

namespace trainwatch {

// Innermost kept: the native frames that matter (a syscall, a lock, a CUDA call) are the
// first few; the rest is the interpreter's loop, which the Python stack already shows.
inline constexpr size_t kMaxNativeFrames = 16;

struct NativeFrame {
  std::string function;  // the symbol, or the address ("0x5d64b4") when there is none
  std::string module;    // the file's base name ("libc.so.6"); "" when not printed
};

struct NativeThread {
  int32_t tid = 0;
  std::vector<NativeFrame> frames;  // innermost first
};

struct NativeStack {
  std::vector<NativeThread> threads;  // the main thread (TID == PID) first, then eu-stack's order
  bool truncated = false;             // threads or frames past the bounds were left out
};

// Parses eu-stack's output for process `pid`; lines that are not part of the format (its
// own "eu-stack: ..." messages) are skipped. Empty when nothing in the text is a thread.
// The main thread is kept even when it comes after kMaxStackThreads others.
NativeStack parse_eu_stack(std::string_view text, int32_t pid);

// The one JSON form of a frame, {"function", "module"}, and of a stack,
// {"threads": [{"tid", "frames": [...]}], "truncated"}: in the node report, the API and a
// kept capture alike.
boost::json::object native_frame_json(const NativeFrame& frame);
boost::json::object native_stack_json(const NativeStack& stack);

}  // namespace trainwatch
