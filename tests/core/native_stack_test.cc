#include "core/native_stack.h"

#include <gtest/gtest.h>

#include <string>

namespace trainwatch {
namespace {

// What `eu-stack -p PID -m -n 17` printed (stdout, then its stderr note) for a Python 3.11
// rank asleep in time.sleep with a second thread asleep too, cut to a few frames.
constexpr std::string_view kSample =
    "PID 10756 - process\n"
    "TID 10758:\n"
    "#0  0x00007f104ea30545 clock_nanosleep@GLIBC_2.2.5 - /usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "#1  0x00000000005d64b4 - /usr/bin/python3.11\n"
    "#2  0x00007f104e9ea1f5 start_thread - /usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "#3  0x00007f104ea6a8ec __clone3 - /usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "TID 10756:\n"
    "#0  0x00007f104ea30545 clock_nanosleep@GLIBC_2.2.5 - /usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "#1  0x00000000005d64b4 - /usr/bin/python3.11\n"
    "#2  0x000000000053acbc PyObject_Vectorcall - /usr/bin/python3.11\n"
    "#3  0x000000000052b9e0 _PyEval_EvalFrameDefault - /usr/bin/python3.11\n"
    "eu-stack: tid 10756: shown max number of frames (17, use -n 0 for unlimited)\n";

TEST(NativeStack, ParsesThreadsWithTheMainThreadFirst) {
  NativeStack s = parse_eu_stack(kSample, 10756);
  ASSERT_EQ(s.threads.size(), 2u);
  EXPECT_FALSE(s.truncated);
  const NativeThread& main = s.threads[0];
  EXPECT_EQ(main.tid, 10756);
  ASSERT_EQ(main.frames.size(), 4u);
  EXPECT_EQ(main.frames[0].function, "clock_nanosleep@GLIBC_2.2.5");
  EXPECT_EQ(main.frames[0].module, "libc.so.6");
  EXPECT_EQ(main.frames[1].function, "0x5d64b4");  // no symbol: the address
  EXPECT_EQ(main.frames[1].module, "python3.11");
  EXPECT_EQ(main.frames[3].function, "_PyEval_EvalFrameDefault");
  EXPECT_EQ(s.threads[1].tid, 10758);
  EXPECT_EQ(s.threads[1].frames[3].function, "__clone3");
}

TEST(NativeStack, WithoutModulesAndWithSpacesInAName) {
  NativeStack s = parse_eu_stack(
      "TID 7:\n"
      "#0  0x00007f104ea30545 clock_nanosleep\n"
      "#1  0x0000000000401000\n"
      "#2  0x0000000000401234 ns::Queue<int>::pop(std::chrono::duration<long, std::ratio<1l, 1000l> >) - "
      "/opt/my lib/libq.so\n",
      7);
  ASSERT_EQ(s.threads.size(), 1u);
  ASSERT_EQ(s.threads[0].frames.size(), 3u);
  EXPECT_EQ(s.threads[0].frames[0].function, "clock_nanosleep");
  EXPECT_EQ(s.threads[0].frames[0].module, "");
  EXPECT_EQ(s.threads[0].frames[1].function, "0x401000");
  EXPECT_EQ(s.threads[0].frames[2].function,
            "ns::Queue<int>::pop(std::chrono::duration<long, std::ratio<1l, 1000l> >)");
  EXPECT_EQ(s.threads[0].frames[2].module, "libq.so");
}

TEST(NativeStack, BoundsThreadsFramesAndTextKeepingTheMainThread) {
  std::string text;
  for (int tid = 101; tid <= 100 + static_cast<int>(kMaxStackThreads) + 3; ++tid) {
    text += "TID " + std::to_string(tid) + ":\n";
    for (size_t i = 0; i < kMaxNativeFrames + 5; ++i)
      text += "#" + std::to_string(i) + "  0x0000000000401000 " +
              std::string(i == 0 ? kMaxFrameText + 50 : 1, 'f') + " - /lib/x.so\n";
  }
  text += "TID 100:\n#0  0x00007f104ea30545 main_waits - /usr/bin/rank\n";
  NativeStack s = parse_eu_stack(text, 100);
  EXPECT_TRUE(s.truncated);
  ASSERT_EQ(s.threads.size(), kMaxStackThreads);
  EXPECT_EQ(s.threads[0].tid, 100);
  EXPECT_EQ(s.threads[0].frames[0].function, "main_waits");
  EXPECT_EQ(s.threads[1].tid, 101);
  EXPECT_EQ(s.threads[1].frames.size(), kMaxNativeFrames);
  EXPECT_EQ(s.threads[1].frames[0].function.size(), kMaxFrameText);
}

TEST(NativeStack, GarbageIsEmptyNeverACrash) {
  for (std::string_view text :
       {std::string_view(""), std::string_view("eu-stack: dwfl_linux_proc_report pid 1: Permission denied\n"),
        std::string_view("#0  0x00007f104ea30545 frame before any thread\n"),
        std::string_view("TID :\nTID -4:\nTID 9"),
        std::string_view("\0\0\0\n#\n#0\n#0 \n#0  0x\n#0  0xZZ f\nTID 4294967296:\n", 47)}) {
    NativeStack s = parse_eu_stack(text, 1);
    EXPECT_TRUE(s.threads.empty()) << text;
  }
  // A thread whose lines are all garbage is a thread without frames, not a crash.
  NativeStack s = parse_eu_stack("TID 5:\n#x 0x1 f\n#1 0xg - \n# 0x1\n#2  0x1 - \n", 5);
  ASSERT_EQ(s.threads.size(), 1u);
  ASSERT_EQ(s.threads[0].frames.size(), 1u);  // "#2  0x1 - ": an address in no named module
  EXPECT_EQ(s.threads[0].frames[0].function, "0x1");
}

TEST(NativeStack, ReadsNoMoreThanTheDumpBound) {
  std::string text = "TID 3:\n" + std::string(kMaxStackDumpBytes, '\n') + "#0  0x1 late - /lib/x.so\n";
  NativeStack s = parse_eu_stack(text, 3);
  ASSERT_EQ(s.threads.size(), 1u);
  EXPECT_TRUE(s.threads[0].frames.empty());
}

}  // namespace
}  // namespace trainwatch
