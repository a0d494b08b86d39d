// Finding an overdue rank's children that keep a stack file (DataLoader workers), on a
// stand-in /proc: the children files of each of the rank's threads.
#include "agent/child_stacks.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace trainwatch::agent {
namespace {

namespace fs = std::filesystem;

class ChildStacks : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("child_stacks_test." + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "slots" / std::to_string(::geteuid()));
  }
  void TearDown() override { fs::remove_all(root_); }

  void children(int pid, int tid, const std::string& text) {
    fs::create_directories(root_ / "proc" / std::to_string(pid) / "task" / std::to_string(tid));
    std::ofstream(root_ / "proc" / std::to_string(pid) / "task" / std::to_string(tid) / "children") << text;
  }
  void stack_file(int pid) {
    std::ofstream(stack_file_path(top(), ::geteuid(), "j", pid)) << "trainwatch-stack 2 request=fifo\n";
  }
  std::string top() const { return (root_ / "slots").string(); }
  std::string proc() const { return (root_ / "proc").string(); }

  fs::path root_;
};

TEST_F(ChildStacks, EveryThreadsChildrenAreTheRanks) {
  children(100, 100, "101 102 ");
  children(100, 107, "103 ");
  auto pids = child_pids(100, proc(), 16);
  std::sort(pids.begin(), pids.end());
  EXPECT_EQ(pids, (std::vector<int32_t>{101, 102, 103}));
  EXPECT_EQ(child_pids(100, proc(), 2).size(), 2U);
  EXPECT_TRUE(child_pids(999, proc(), 16).empty());
}

TEST_F(ChildStacks, OnlyChildrenWithAStackFileAreAskedAtMostTheBound) {
  std::string many;
  for (int pid = 200; pid < 210; ++pid) many += std::to_string(pid) + " ";
  children(100, 100, many);
  stack_file(201);
  const StackTarget rank{100, ::geteuid(), stack_file_path(top(), ::geteuid(), "j", 100)};
  auto targets = child_stack_targets(rank, top(), "j", proc());
  ASSERT_EQ(targets.size(), 1U);
  EXPECT_EQ(targets[0].pid, 201);
  EXPECT_EQ(targets[0].path, stack_file_path(top(), ::geteuid(), "j", 201));
  for (int pid = 200; pid < 210; ++pid) stack_file(pid);
  EXPECT_EQ(child_stack_targets(rank, top(), "j", proc()).size(), kMaxChildStacks);
}

}  // namespace
}  // namespace trainwatch::agent
