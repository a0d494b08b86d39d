// The OOM killer's verdict on a rank (oom_watch.h): kernel log lines, cgroup counts, and the
// baseline two samples back; the sampled time in collectives (rank_samples.h).
#include "agent/oom_watch.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "agent/rank_samples.h"

namespace trainwatch::agent {
namespace {

TEST(OomKilledPid, GlobalAndCgroupKillLinesNameThePid) {
  EXPECT_EQ(oom_killed_pid("3,5001,123456789,-;Out of memory: Killed process 4242 (python3) total-vm:1234kB"),
            4242);
  EXPECT_EQ(oom_killed_pid("3,5002,123456790,-;Memory cgroup out of memory: Killed process 77 (python3) "
                           "total-vm:6012kB, anon-rss:601208kB"),
            77);
  EXPECT_EQ(oom_killed_pid("6,5003,1,-;Killed process 5 (x)"), std::nullopt) << "not the OOM killer's";
  EXPECT_EQ(oom_killed_pid("6,5004,1,-;Out of memory: Killed process abc"), std::nullopt);
  EXPECT_EQ(oom_killed_pid("no separator"), std::nullopt);
}

TEST(OomKillCount, ReadFromEitherCgroupVersion) {
  EXPECT_EQ(parse_oom_kill_count("low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 0\n"), 2u);
  EXPECT_EQ(parse_oom_kill_count("oom_kill_disable 0\nunder_oom 0\noom_kill 5\n"), 5u);
  EXPECT_EQ(parse_oom_kill_count("oom_kill_disable 0\n"), std::nullopt);
}

TEST(OomCountFile, V1MemoryHierarchyFirstElseV2) {
  EXPECT_EQ(oom_count_file("12:pids:/x\n4:memory:/slurm/job_7\n0::/slurm/job_7\n", "/sys/fs/cgroup"),
            "/sys/fs/cgroup/memory/slurm/job_7/memory.oom_control");
  EXPECT_EQ(oom_count_file("0::/kubepods/pod1/abc\n", "/sys/fs/cgroup"),
            "/sys/fs/cgroup/kubepods/pod1/abc/memory.events");
  EXPECT_EQ(oom_count_file("5:cpu,memory:/a\n", "/r"), "/r/memory/a/memory.oom_control");
  EXPECT_EQ(oom_count_file("2:cpu:/a\n", "/r"), "");
}

// A fake /proc and cgroup tree: the rank's cgroup count is found from its /proc/<pid>/cgroup.
TEST(OomWatch, ReadsTheRanksOwnCgroupCount) {
  const auto root = std::filesystem::temp_directory_path() / ("oom-watch-" + std::to_string(::getpid()));
  std::filesystem::create_directories(root / "proc/42");
  std::filesystem::create_directories(root / "cg/job");
  std::ofstream(root / "proc/42/cgroup") << "0::/job\n";
  std::ofstream(root / "cg/job/memory.events") << "oom 1\noom_kill 1\n";
  OomWatch watch((root / "proc").string(), (root / "cg").string());
  EXPECT_EQ(watch.cgroup_kills(42), 1u);
  std::ofstream(root / "cg/job/memory.events") << "oom 2\noom_kill 2\n";
  EXPECT_EQ(watch.cgroup_kills(42), 2u);
  EXPECT_EQ(watch.cgroup_kills(43), std::nullopt) << "no such process";
  std::filesystem::remove_all(root);
}

// The kernel counts the kill before it sends SIGKILL, and 600 MB take a while to free: the
// last sample that saw the rank alive may already count its own kill.
TEST(OomBaseline, ComparesWithTwoSamplesBeforeDeath) {
  OomBaseline b;
  b.alive(10, 3);
  b.alive(10, 3);
  b.alive(11, 4);  // counted, still alive
  EXPECT_TRUE(b.rose(11, 4));
  OomBaseline quiet;
  quiet.alive(10, 3);
  quiet.alive(10, 3);
  EXPECT_FALSE(quiet.rose(10, 3));
  EXPECT_TRUE(quiet.rose(10, 4)) << "the rank's own cgroup counted a kill";
  EXPECT_TRUE(quiet.rose(11, std::nullopt)) << "only the host's count is known";
}

TEST(CollectiveTime, CountsEachIntervalByWhereTheSampleFoundTheRank) {
  CollectiveTime t;
  t.sample(false, false, 0);
  EXPECT_FALSE(t.known()) << "no collective marked yet";
  t.sample(true, true, 100);
  t.sample(true, true, 300);
  t.sample(true, false, 450);
  t.sample(true, true, 10'000);  // the agent stalled: one bounded interval
  EXPECT_TRUE(t.known());
  EXPECT_EQ(t.wait_ms(), 200 + CollectiveTime::kMaxGapMs);
  EXPECT_EQ(t.sampled_ms(), 350 + CollectiveTime::kMaxGapMs);
}

}  // namespace
}  // namespace trainwatch::agent
