#include "core/python_stack.h"

#include <gtest/gtest.h>

namespace trainwatch {
namespace {

// What Python 3.11's faulthandler wrote for a rank asleep in its data loader, with a
// thread of its own waiting in the standard library.
constexpr std::string_view kDump =
    "Thread 0x00007f2b7c9fa640 (most recent call first):\n"
    "  File \"/usr/lib/python3.11/threading.py\", line 320 in wait\n"
    "  File \"/usr/lib/python3.11/threading.py\", line 1002 in _bootstrap\n"
    "\n"
    "Current thread 0x00007f2b80f6b000 (most recent call first):\n"
    "  File \"/work/data.py\", line 31 in fetch_next_shard\n"
    "  File \"/work/train.py\", line 57 in <module>\n";

TEST(PythonStack, ParsesThreadsWithTheMainThreadFirst) {
  PyStack s = parse_faulthandler_dump(kDump);
  ASSERT_EQ(s.threads.size(), 2u);
  EXPECT_FALSE(s.truncated);
  const auto& main = s.threads[0];
  EXPECT_TRUE(main.current);
  ASSERT_EQ(main.frames.size(), 2u);
  EXPECT_EQ(main.frames[0].file, "/work/data.py");
  EXPECT_EQ(main.frames[0].line, 31);
  EXPECT_EQ(main.frames[0].function, "fetch_next_shard");
  EXPECT_EQ(main.frames[1].function, "<module>");
  EXPECT_EQ(s.threads[1].frames[0].function, "wait");
}

TEST(PythonStack, WithoutAModuleFrameTheCurrentThreadComesFirst) {
  PyStack s = parse_faulthandler_dump(
      "Thread 0x1 (most recent call first):\n  File \"a.py\", line 1 in a\n"
      "Current thread 0x2 (most recent call first):\n  File \"b.py\", line 2 in b\n");
  ASSERT_EQ(s.threads.size(), 2u);
  EXPECT_EQ(s.threads[0].frames[0].function, "b");
}

TEST(PythonStack, WithoutAModuleFrameOrACurrentThreadTheLastListedComesFirst) {
  // The sampler thread's dump: no thread is current, and CPython lists the main thread last.
  PyStack s = parse_faulthandler_dump(
      "Thread 0x1 (most recent call first):\n  File \"a.py\", line 1 in a\n"
      "Thread 0x2 (most recent call first):\n  File \"b.py\", line 2 in b\n"
      "Thread 0x3 (most recent call first):\n  File \"main.py\", line 3 in serve\n");
  ASSERT_EQ(s.threads.size(), 3u);
  EXPECT_EQ(s.threads[0].frames[0].function, "serve");
  EXPECT_EQ(s.threads[1].frames[0].function, "a");
}

TEST(PythonStack, KeepsTheInnermostFramesAndSaysWhenItCut) {
  std::string dump = "Stack (most recent call first):\n";
  for (int i = 0; i < 100; ++i) dump += "  File \"deep.py\", line " + std::to_string(i) + " in f\n";
  PyStack s = parse_faulthandler_dump(dump);
  ASSERT_EQ(s.threads.size(), 1u);
  EXPECT_EQ(s.threads[0].frames.size(), kMaxStackFrames);
  EXPECT_EQ(s.threads[0].frames[0].line, 0);
  EXPECT_TRUE(s.truncated);
}

TEST(PythonStack, BoundsThreadsAndIgnoresGarbage) {
  std::string dump = "garbage\n  File \"x\n\xff\xfe\n";
  for (int i = 0; i < 20; ++i) dump += "Thread 0x1 (most recent call first):\n  File \"t.py\", line 3 in t\n";
  dump += "  ...\n  File \"no-line.py\" in nowhere\n";
  PyStack s = parse_faulthandler_dump(dump);
  EXPECT_EQ(s.threads.size(), kMaxStackThreads);
  EXPECT_TRUE(s.truncated);
  EXPECT_TRUE(parse_faulthandler_dump("no stack here\n").threads.empty());
}

TEST(PythonStack, CutsLongNames) {
  std::string name(1000, 'f');
  PyStack s =
      parse_faulthandler_dump("Stack (most recent call first):\n  File \"x.py\", line 1 in " + name + "\n");
  ASSERT_EQ(s.threads.size(), 1u);
  EXPECT_EQ(s.threads[0].frames[0].function.size(), kMaxFrameText);
}

TEST(PythonStack, TellsUserCodeFromLibraries) {
  EXPECT_TRUE(is_user_frame({"/work/data.py", 1, "f"}));
  EXPECT_TRUE(is_user_frame({"train.py", 1, "f"}));
  EXPECT_TRUE(is_user_frame({"/home/me/lib/pythonic/x.py", 1, "f"}));
  EXPECT_FALSE(is_user_frame({"/usr/lib/python3.11/threading.py", 1, "wait"}));
  EXPECT_FALSE(is_user_frame(
      {"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", 1, "all_reduce"}));
  EXPECT_FALSE(is_user_frame({"/venv/lib/python3.11/site-packages/deepspeed/comm/comm.py", 1, "all_reduce"}));
  EXPECT_FALSE(is_user_frame({"<frozen runpy>", 88, "_run_code"}));
  EXPECT_EQ(base_name("/work/src/data.py"), "data.py");
  EXPECT_EQ(base_name("data.py"), "data.py");
}

TEST(PythonStack, AChildsStackKeepsItsMainThreadsInnermostFrames) {
  PyThreadStack main, other;
  for (int i = 0; i < 30; ++i) main.frames.push_back({"/work/data.py", i, "f"});
  other.frames.push_back({"/work/x.py", 1, "g"});
  const PyStack child = child_stack_of(PyStack{{main, other}, false});
  ASSERT_EQ(child.threads.size(), 1U);
  ASSERT_EQ(child.threads[0].frames.size(), kMaxChildFrames);
  EXPECT_EQ(child.threads[0].frames.front().line, 0);
  EXPECT_TRUE(child.truncated);
  EXPECT_FALSE(child_stack_of(PyStack{{other}, false}).truncated);
  EXPECT_TRUE(child_stack_of(PyStack{}).threads.empty());
}

}  // namespace
}  // namespace trainwatch
