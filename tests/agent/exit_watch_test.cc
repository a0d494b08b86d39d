#include "agent/exit_watch.h"

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace trainwatch::agent {
namespace {

// One connector message as the kernel sends it: netlink header, connector header, event.
std::string exit_event(int32_t pid, int32_t tgid, uint32_t status, uint32_t idx = CN_IDX_PROC) {
  std::string out(NLMSG_LENGTH(sizeof(cn_msg) + sizeof(proc_event)), '\0');
  nlmsghdr nl{};
  nl.nlmsg_len = static_cast<uint32_t>(out.size());
  nl.nlmsg_type = NLMSG_DONE;
  cn_msg cn{};
  cn.id = {idx, CN_VAL_PROC};
  cn.len = sizeof(proc_event);
  proc_event ev{};
  ev.what = proc_event::PROC_EVENT_EXIT;
  ev.event_data.exit.process_pid = pid;
  ev.event_data.exit.process_tgid = tgid;
  ev.event_data.exit.exit_code = status;
  std::memcpy(out.data(), &nl, sizeof nl);
  std::memcpy(out.data() + NLMSG_HDRLEN, &cn, sizeof cn);
  std::memcpy(out.data() + NLMSG_HDRLEN + sizeof cn, &ev, sizeof ev);
  return out;
}

TEST(ProcessExits, TheLeadersExitCountsAThreadsDoesNot) {
  const std::string both = exit_event(4242, 4242, SIGKILL) + exit_event(4243, 4242, SIGKILL);
  auto exits = parse_process_exits(both.data(), both.size());
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0], std::make_pair(4242, static_cast<uint32_t>(SIGKILL)));
}

TEST(ProcessExits, OtherSendersAndTornMessagesAreSkipped) {
  const std::string other = exit_event(1, 1, 0, CN_IDX_PROC + 1);
  EXPECT_TRUE(parse_process_exits(other.data(), other.size()).empty());
  const std::string whole = exit_event(77, 77, 1u << 8);
  for (size_t cut = 0; cut < whole.size(); ++cut) {
    EXPECT_TRUE(parse_process_exits(whole.data(), cut).empty()) << cut;
  }
  std::string lying = whole;
  const uint32_t too_long = 1 << 20;
  std::memcpy(lying.data(), &too_long, sizeof too_long);
  EXPECT_TRUE(parse_process_exits(lying.data(), lying.size()).empty());
}

TEST(OomKillCount, ReadFromVmstat) {
  const auto dir = std::filesystem::temp_directory_path() / ("tw_vmstat_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "vmstat") << "nr_free_pages 12\noom_kill 3\npgfault 9\n";
  EXPECT_EQ(read_oom_kill_count(dir.string()), 3u);
  std::ofstream(dir / "vmstat") << "nr_free_pages 12\n";
  EXPECT_EQ(read_oom_kill_count(dir.string()), std::nullopt);
  std::filesystem::remove_all(dir);
}

// The real kernel: a process that is not ours to wait for is SIGKILLed, and the watch
// tells how it ended. (Our own child here, but nothing reaps it before the watch is read.)
TEST(ExitWatch, TellsHowAProcessEndedWhenTheKernelAllowsIt) {
  std::string why;
  auto watch = ExitWatch::open(why);
  if (!watch) GTEST_SKIP() << "the kernel refused process events here: " << why;
  const pid_t child = fork();
  if (child == 0) {
    pause();
    _exit(0);
  }
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  // The kernel queues the event before the parent can reap the child: one read finds it.
  watch->drain([child](int32_t pid) { return pid == child; });
  const std::optional<uint32_t> seen = watch->take(child);
  ASSERT_TRUE(seen.has_value());
  EXPECT_EQ(*seen, static_cast<uint32_t>(status));
  EXPECT_FALSE(watch->take(child).has_value()) << "told once";
}

}  // namespace
}  // namespace trainwatch::agent
