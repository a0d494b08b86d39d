// A handle in a forked child (reporter/fork_guard.h): every call is a no-op there, so the
// child's steps, status and error never reach its parent's slot; the parent goes on.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "reporter/slot_file.h"
#include "reporter/slot_reader.h"
#include "reporter/temp_dir.h"
#include "trainwatch/trainwatch.h"

namespace trainwatch::reporter {
namespace {

using trainwatch::testing::TempDir;

SlotSnapshot slot_of(const std::string& dir) {
  auto file = SlotFile::open_for_reading(slot_file_path(dir, "job"));
  EXPECT_TRUE(file.ok());
  SlotSnapshot s;
  EXPECT_EQ(read_slot(*file->slot(0), &s), ReadResult::kOk);
  return s;
}

TEST(Fork, AChildWritesNothingToItsParentsSlotAndTheParentGoesOn) {
  TempDir tmp;
  tw_options o{};
  o.struct_size = sizeof o;
  o.job = "job";
  o.dir = tmp.path().c_str();
  o.rank_set = o.local_rank_set = o.world_size_set = 1;
  o.world_size = 1;
  tw_handle* h = nullptr;
  ASSERT_EQ(tw_open(&o, &h), TW_OK);
  tw_set_status(h, TW_STATUS_TRAINING);
  tw_step(h, 7, 0.5);

  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Exit codes say what the child saw: 0 only if every call was refused as disabled.
    int bad = 0;
    bad |= tw_step(h, 999, 9.0) != TW_ERR_DISABLED;
    bad |= tw_error(h, "the child failed") != TW_ERR_DISABLED;
    bad |= tw_set_status(h, TW_STATUS_FAILED) != TW_ERR_DISABLED;
    bad |= tw_is_enabled(h) != 0;
    tw_close(h);  // unmaps the child's copy only
    _exit(bad);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child's calls were not all refused";

  SlotSnapshot s = slot_of(tmp.path());
  EXPECT_EQ(s.step, 7);
  EXPECT_EQ(s.status, static_cast<uint32_t>(TW_STATUS_TRAINING));
  EXPECT_EQ(s.error, "");
  EXPECT_EQ(tw_step(h, 8, 0.25), TW_OK);
  EXPECT_EQ(slot_of(tmp.path()).step, 8);
  tw_close(h);
}

}  // namespace
}  // namespace trainwatch::reporter
