// Ranks whose slot went while they still run are named every sample, with their pid and
// the file; a finished rank, or a file that is there but unreadable, is not "removed".
#include <gtest/gtest.h>

#include <map>

#include "agent/removed_slots.h"

namespace trainwatch::agent {
namespace {

RankView running(int rank, int32_t pid) {
  RankView v;
  v.slot.rank = rank;
  v.slot.pid = pid;
  v.slot.start_ticks = 1000 + static_cast<uint64_t>(pid);
  v.alive = true;
  return v;
}

class RemovedSlotsTest : public ::testing::Test {
 protected:
  std::vector<RemovedSlot> end_sample() {
    return removed_.end_sample([this](int32_t pid, uint64_t start_ticks) {
      auto it = running_.find(pid);
      return it != running_.end() && it->second == start_ticks;
    });
  }

  RemovedSlots removed_;
  std::map<int32_t, uint64_t> running_{{41, 1041}, {42, 1042}};  // pid: start ticks
  const std::string path_ = "/dev/shm/trainwatch/1000/train.slots";
};

TEST_F(RemovedSlotsTest, ARankSeenAtEverySampleIsNeverRemoved) {
  for (int sample = 0; sample < 3; ++sample) {
    removed_.seen({1000, 0}, running(0, 41), path_);
    removed_.seen({1000, 1}, running(1, 42), path_);
    EXPECT_TRUE(end_sample().empty());
  }
}

TEST_F(RemovedSlotsTest, ARankThatStillRunsWithoutItsSlotIsNamedEverySampleUntilItExits) {
  removed_.seen({1000, 0}, running(0, 41), path_);
  removed_.seen({1000, 1}, running(1, 42), path_);
  EXPECT_TRUE(end_sample().empty());

  // The folder is gone; a later rank's new file holds only slot 2.
  removed_.seen({1000, 2}, running(2, 43), path_);
  running_[43] = 1043;
  for (int sample = 0; sample < 2; ++sample) {
    auto gone = end_sample();
    ASSERT_EQ(gone.size(), 2u);
    EXPECT_EQ(gone[0].rank, 0);
    EXPECT_EQ(gone[0].pid, 41);
    EXPECT_EQ(gone[0].path, path_);
    EXPECT_EQ(
        gone[0].message.rfind("rank 0 (pid 41) still runs, but its slot file " + path_ + " was removed", 0),
        0u)
        << gone[0].message;
    EXPECT_EQ(gone[1].rank, 1);
    removed_.seen({1000, 2}, running(2, 43), path_);
  }

  // Rank 1 exits: it is forgotten, as any finished rank is.
  running_.erase(42);
  auto gone = end_sample();
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0].rank, 0);
}

TEST_F(RemovedSlotsTest, AProcessOfTheSamePidButAnotherStartIsNotTheRank) {
  removed_.seen({1000, 0}, running(0, 41), path_);
  EXPECT_TRUE(end_sample().empty());
  running_[41] = 5000;  // pid 41 now belongs to a process started later
  EXPECT_TRUE(end_sample().empty());
}

TEST_F(RemovedSlotsTest, AnUnreadableFileOrAnInvalidSlotIsNoRemoval) {
  removed_.seen({1000, 0}, running(0, 41), path_);
  removed_.seen({1001, 0}, running(0, 42), "/dev/shm/trainwatch/1001/train.slots");
  EXPECT_TRUE(end_sample().empty());
  removed_.unreadable(1000);   // malformed: it says so itself
  removed_.forget({1001, 0});  // found invalid: no rank any more
  EXPECT_TRUE(end_sample().empty());
}

TEST_F(RemovedSlotsTest, ARankSeenDeadIsForgotten) {
  removed_.seen({1000, 0}, running(0, 41), path_);
  EXPECT_TRUE(end_sample().empty());
  RankView dead = running(0, 41);
  dead.alive = false;
  removed_.seen({1000, 0}, dead, path_);
  EXPECT_TRUE(end_sample().empty());
  EXPECT_TRUE(end_sample().empty());
}

}  // namespace
}  // namespace trainwatch::agent
