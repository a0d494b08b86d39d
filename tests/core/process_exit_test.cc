#include "core/process_exit.h"

#include <sys/wait.h>

#include <csignal>

#include <gtest/gtest.h>

namespace trainwatch {
namespace {

// Wait statuses as the kernel composes them (what waitpid and the process events carry).
constexpr uint32_t exited(int code) { return static_cast<uint32_t>(code) << 8; }
constexpr uint32_t killed(int signal, bool core = false) {
  return static_cast<uint32_t>(signal) | (core ? 0x80u : 0u);
}

TEST(ProcessExit, AnExitCodeIsReadAsSuchAndSaid) {
  const ProcessExit e = exit_from_wait_status(exited(1));
  EXPECT_EQ(e.code, 1);
  EXPECT_EQ(e.signal, 0);
  EXPECT_EQ(describe_exit(e), "exited with code 1");
  EXPECT_EQ(describe_exit(exit_from_wait_status(exited(0))), "exited with code 0");
}

TEST(ProcessExit, ASignalIsNamedWithItsCoreDump) {
  const ProcessExit e = exit_from_wait_status(killed(SIGSEGV, true));
  EXPECT_EQ(e.signal, SIGSEGV);
  EXPECT_EQ(e.code, -1);
  EXPECT_TRUE(e.core_dumped);
  EXPECT_EQ(describe_exit(e), "was killed by SIGSEGV (core dumped)");
  EXPECT_EQ(describe_exit(exit_from_wait_status(killed(SIGTERM))), "was killed by SIGTERM");
}

TEST(ProcessExit, TheOomKillerIsSaidWhenTheAgentJudgedIt) {
  ProcessExit e = exit_from_wait_status(killed(SIGKILL));
  EXPECT_EQ(describe_exit(e), "was killed by SIGKILL");
  e.oom_killed = true;
  EXPECT_EQ(describe_exit(e), "was killed by SIGKILL (the kernel's OOM killer)");
}

TEST(ProcessExit, ASignalWithoutANameHereIsGivenItsNumber) {
  EXPECT_EQ(signal_name(SIGRTMIN + 3), "signal " + std::to_string(SIGRTMIN + 3));
}

TEST(ProcessExit, AgreesWithTheLibcMacros) {
  int status = 0;
  const pid_t child = fork();
  if (child == 0) _exit(7);
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_EQ(exit_from_wait_status(static_cast<uint32_t>(status)).code, WEXITSTATUS(status));
}

}  // namespace
}  // namespace trainwatch
