#include "agent/wait_point.h"

#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

namespace trainwatch::agent {
namespace {

TEST(SyscallName, EveryCallHasTheKernelsName) {
  EXPECT_EQ(syscall_name(SYS_futex), "futex");
  EXPECT_EQ(syscall_name(SYS_clock_nanosleep), "clock_nanosleep");
  EXPECT_EQ(syscall_name(SYS_ioctl), "ioctl");  // not a wait, named all the same
  EXPECT_EQ(syscall_name(99'999), "syscall 99999");
}

TEST(SyscallFromProc, ReadsTheNumberOrRunning) {
  EXPECT_EQ(syscall_from_proc("202 0x7f0 0x80 0x0 0x0 0x0 0x0 0x7ffd 0x7f1\n"), "futex");
  EXPECT_EQ(syscall_from_proc("running\n"), "running");
  EXPECT_EQ(syscall_from_proc("-1 0x7ffd 0x7f1\n"), "");
  EXPECT_EQ(syscall_from_proc(""), "");
}

#ifdef SYS_pause
// A real process blocked in pause(2) reads "pause", as the hang in C does, not a number.
TEST(ReadWaitPoint, AProcessBlockedInPauseReadsPause) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  WaitPoint w;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while ((w = read_wait_point(child, "/proc")).syscall != "pause" &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // until the child reaches pause()
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_EQ(w.syscall, "pause");
}
#endif

}  // namespace
}  // namespace trainwatch::agent
