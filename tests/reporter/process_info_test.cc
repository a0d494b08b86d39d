#include "reporter/process_info.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <csignal>

namespace trainwatch::reporter {
namespace {

TEST(ParseStat, CommandWithSpacesAndParentheses) {
  std::string text = "123 (a b) c)) S 1 123 123 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 987654 100 200\n";
  auto info = parse_stat(123, text);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->state, 'S');
  EXPECT_EQ(info->start_ticks, 987654u);
}

TEST(ParseStat, MalformedIsNullopt) {
  EXPECT_FALSE(parse_stat(1, "garbage"));
  EXPECT_FALSE(parse_stat(1, "1 (x) S 1 2"));
}

// A zombie's stat holds the wait status its parent has still to read: how an agent that is
// not the parent learns that a rank was killed by SIGKILL, while the parent has not reaped it.
TEST(ReadProcess, AZombieSaysHowItEnded) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  ::kill(child, SIGKILL);
  siginfo_t ended{};
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(child), &ended, WEXITED | WNOWAIT), 0);  // a zombie, not reaped
  std::optional<ProcessInfo> info = read_process(child);
  ASSERT_TRUE(info && info->state == 'Z');
  ASSERT_TRUE(info->exit_status);
  EXPECT_TRUE(WIFSIGNALED(static_cast<int>(*info->exit_status)));
  EXPECT_EQ(WTERMSIG(static_cast<int>(*info->exit_status)), SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  auto self = read_process(static_cast<int32_t>(::getpid()));
  ASSERT_TRUE(self);
  EXPECT_GT(self->rss_pages, 0u);
}

TEST(ReadProcess, SelfIsAliveWithItsStartTime) {
  auto self = read_process(static_cast<int32_t>(::getpid()));
  ASSERT_TRUE(self);
  EXPECT_EQ(self->start_ticks, self_start_ticks());
  EXPECT_FALSE(is_dead(self, self_start_ticks()));
  EXPECT_TRUE(is_dead(self, self_start_ticks() + 1)) << "same pid, other start time: pid reuse";
}

TEST(ReadProcess, ZombieIsDeadAndReapedIsGone) {
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  // Until we reap it the child is a zombie; wait for that state (bounded) rather than sleep.
  std::optional<ProcessInfo> info;
  for (int i = 0; i < 10'000; ++i) {
    info = read_process(child);
    if (info && info->state == 'Z') break;
    ::usleep(1000);
  }
  ASSERT_TRUE(info);
  EXPECT_EQ(info->state, 'Z');
  EXPECT_TRUE(is_dead(info, info->start_ticks));
  ::waitpid(child, nullptr, 0);
  EXPECT_FALSE(read_process(child));
}

}  // namespace
}  // namespace trainwatch::reporter
