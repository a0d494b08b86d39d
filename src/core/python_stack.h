// A Python stack as the rank's faulthandler writes it, parsed: the agent reads it from the
// rank's stack file (docs/training.md, "Stacks on a hang") and sends it in the node report;
// the server reads it back from the report and says where each rank is (jobs/rank_place.h).
//
// faulthandler's dump (Python 3.8-3.12), most recent call first:
//   Thread 0x00007f2b7c9fa640 (most recent call first):
//     File "/usr/lib/python3.11/threading.py", line 320 in wait
//
//   Current thread 0x00007f2b80f6b000 (most recent call first):
//     File "/work/data.py", line 31 in fetch_next_shard
//     File "/work/train.py", line 57 in <module>
// Pure and bounded: any text in, at most kMaxStackThreads threads of kMaxStackFrames frames.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/fwd.hpp>

namespace trainwatch {

inline constexpr size_t kMaxStackThreads = 8;
inline constexpr size_t kMaxStackFrames = 48;            // innermost kept: that is where a rank is
inline constexpr size_t kMaxFrameText = 240;             // a file name or function longer than this is cut
inline constexpr size_t kMaxStackDumpBytes = 64 * 1024;  // of a dump read; the rest is ignored

struct PyFrame {
  std::string file;
  int line = 0;
  std::string function;
};

struct PyThreadStack {
  bool current = false;         // the thread that ran the signal handler
  std::vector<PyFrame> frames;  // innermost first
};

struct PyStack {
  // The main thread (the one whose outermost frames run a script's <module>) first, when
  // one can be told; then the others in the dump's order.
  std::vector<PyThreadStack> threads;
  bool truncated = false;  // threads or frames past the bounds were left out
};

// The stack of one of a rank's child processes that keeps a stack file of its own (a
// DataLoader worker, docs/training.md "Stacks on a hang"), captured with the rank's when its
// step is overdue. Only its main thread's innermost kMaxChildFrames frames are kept, and at
// most kMaxChildStacks children per rank, so a rank with many workers fits in a report.
inline constexpr size_t kMaxChildStacks = 4;
inline constexpr size_t kMaxChildFrames = 16;

struct ChildPyStack {
  int32_t pid = 0;
  PyStack stack;  // one thread, at most kMaxChildFrames frames
};

// The child's main thread, cut to kMaxChildFrames (truncated set when anything was left out).
PyStack child_stack_of(const PyStack& whole);

// [{"pid", "threads", "truncated"}]: in the node report and the API alike.
boost::json::array child_stacks_json(const std::vector<ChildPyStack>& children);

// Parses one dump; lines that are not part of the format are skipped. An empty stack when
// nothing in the text is a thread header.
PyStack parse_faulthandler_dump(std::string_view text);

// Whether a frame is the program's own code rather than the interpreter's standard library,
// an installed package (site-packages, dist-packages) or a frozen module.
bool is_user_frame(const PyFrame& frame);

// The one JSON form of a frame, {"file", "line", "function"}, and of a stack's threads,
// [{"current", "frames": [...]}]: in the node report, the API and a kept capture alike.
boost::json::object py_frame_json(const PyFrame& frame);
boost::json::array py_threads_json(const PyStack& stack);

// "data.py" for "/work/src/data.py".
std::string_view base_name(std::string_view path);

}  // namespace trainwatch
