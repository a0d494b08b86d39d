// Native frames from a real process with the real eu-stack, and the safety rules around it:
// a stopped rank is never traced, and a tool that dies while the rank is stopped leaves it
// running again.
#include "agent/native_capture.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "reporter/process_info.h"

namespace trainwatch::agent {
namespace {

// A child asleep in pause() until killed; reaped by the destructor.
struct Sleeper {
  pid_t pid = ::fork();
  Sleeper() {
    if (pid == 0) {
      for (;;) ::pause();
    }
    for (int i = 0; i < 400 && state() != 'S'; ++i) ::usleep(5'000);
  }
  ~Sleeper() {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  char state() const {
    auto info = reporter::read_process(pid);
    return info ? info->state : '?';
  }
};

std::string eu_stack() {
  const char* path = std::getenv("PATH");
  return find_on_path("eu-stack", path ? path : "/usr/bin:/bin");
}

TEST(FindOnPath, FirstExecutableInPathOrNothing) {
  EXPECT_EQ(find_on_path("sh", "/nonexistent:/bin"), "/bin/sh");
  EXPECT_EQ(find_on_path("no-such-tool-here", "/bin:/usr/bin"), "");
  EXPECT_EQ(find_on_path("/bin/sh", ""), "/bin/sh");
  EXPECT_EQ(find_on_path("/nonexistent/sh", "/bin"), "");
  EXPECT_EQ(find_on_path("", "/bin"), "");
}

TEST(NativeCapture, ASleepingProcessShowsItsLibcFrame) {
  const std::string tool = eu_stack();
  if (tool.empty()) GTEST_SKIP() << "eu-stack is not installed (scripts/setup.sh installs elfutils)";
  Sleeper rank;
  auto out = capture_native_stacks(tool, {rank.pid}, "/proc");
  ASSERT_EQ(out.size(), 1u);
  ASSERT_TRUE(out[0].stack) << out[0].note;
  EXPECT_EQ(out[0].note, "");
  const NativeThread& main = out[0].stack->threads.at(0);
  EXPECT_EQ(main.tid, rank.pid);
  ASSERT_FALSE(main.frames.empty());
  EXPECT_TRUE(std::any_of(main.frames.begin(), main.frames.end(),
                          [](const NativeFrame& f) { return f.module.rfind("libc", 0) == 0; }))
      << main.frames[0].function << " " << main.frames[0].module;
  // Detached and running on: back in its sleep, never left traced-stopped. Just after the
  // detach it may still be running (restarting the sleep the trace interrupted).
  char state = rank.state();
  for (int i = 0; i < 400 && state == 'R'; ++i) {
    ::usleep(5'000);
    state = rank.state();
  }
  EXPECT_EQ(state, 'S');
}

TEST(NativeCapture, AStoppedRankIsNotTracedAndStaysStopped) {
  Sleeper rank;
  ::kill(rank.pid, SIGSTOP);
  int ws = 0;
  ASSERT_EQ(::waitpid(rank.pid, &ws, WUNTRACED), rank.pid);
  auto out = capture_native_stacks(eu_stack().empty() ? "/bin/false" : eu_stack(), {rank.pid}, "/proc");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].stack);
  EXPECT_EQ(out[0].note, "the rank is stopped (state T): not traced");
  ::usleep(50'000);
  EXPECT_EQ(rank.state(), 'T');
}

// What a tracer killed mid-walk can leave: the rank stopped. A stand-in for eu-stack stops
// the rank (as PTRACE_ATTACH does) and hangs; past the deadline it is killed, and the rank
// is sent SIGCONT.
TEST(NativeCapture, AToolKilledAtTheDeadlineLeavesTheRankRunning) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("native-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string tool = (dir / "hangs").string();
  {
    std::ofstream f(tool);
    f << "#!/bin/sh\nkill -STOP \"$2\"\nexec sleep 30\n";  // called as: TOOL -p PID -m -n 17
  }
  std::filesystem::permissions(tool, std::filesystem::perms::owner_all);
  Sleeper rank;
  const auto started = std::chrono::steady_clock::now();
  auto out = capture_native_stacks(tool, {rank.pid}, "/proc", Millis{300});
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_LT(took, std::chrono::seconds(2));  // the deadline, not the tool's 30 s
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].stack);
  EXPECT_EQ(out[0].note,
            "eu-stack took longer than 300 ms: killed; the rank was left stopped and was sent SIGCONT");
  for (int i = 0; i < 200 && rank.state() != 'S'; ++i) ::usleep(5'000);  // back in pause()
  EXPECT_EQ(rank.state(), 'S');
  std::filesystem::remove_all(dir);
}

TEST(NativeCapture, FailuresAreNotes) {
  Sleeper rank;
  auto missing = capture_native_stacks("/nonexistent/eu-stack", {rank.pid}, "/proc");
  EXPECT_FALSE(missing[0].stack);
  EXPECT_EQ(missing[0].note, "could not run /nonexistent/eu-stack: No such file or directory");
  // A tool that fails with exit code 2, as eu-stack does when it cannot attach.
  auto failed = capture_native_stacks("/bin/sh", {rank.pid}, "/proc");  // sh -p PID: no such script
  EXPECT_FALSE(failed[0].stack);
  EXPECT_EQ(failed[0].note.rfind("eu-stack failed (exit 2): ", 0), 0u) << failed[0].note;
  EXPECT_EQ(rank.state(), 'S');
}

// Inside rank 0 (trainwatch.init(server=...)) the host program may ignore SIGCHLD, and the
// kernel then reaps the tool itself: the capture ends when the tool does, not at the deadline.
TEST(NativeCapture, AHostThatIgnoresSigchldDoesNotWaitForTheDeadline) {
  Sleeper rank;
  struct sigaction ignore {
  }, before{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGCHLD, &ignore, &before);
  const auto started = std::chrono::steady_clock::now();
  auto out = capture_native_stacks("/bin/true", {rank.pid}, "/proc", Millis{1'500});
  const auto took = std::chrono::steady_clock::now() - started;
  ::sigaction(SIGCHLD, &before, nullptr);
  EXPECT_LT(took, std::chrono::milliseconds(1'000));
  EXPECT_FALSE(out[0].stack);
  EXPECT_EQ(out[0].note, "eu-stack printed no thread");
}

}  // namespace
}  // namespace trainwatch::agent
