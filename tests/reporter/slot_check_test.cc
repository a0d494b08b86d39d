// The slot invariants (reporter/slot_check.h): one test per invariant, each breaking it in
// an otherwise valid slot, and a slot written by the library itself passing them all.
#include "reporter/slot_check.h"

#include <gtest/gtest.h>

#include <random>

#include "core/utf8.h"
#include "reporter/slot_file.h"
#include "reporter/temp_dir.h"
#include "trainwatch/trainwatch.h"

namespace trainwatch::reporter {
namespace {

using trainwatch::testing::TempDir;

constexpr int64_t kNow = 1'790'000'000'000;  // 2026-09

SlotSnapshot valid_slot() {
  SlotSnapshot s;
  s.owner = pack_owner(4242, 777);
  s.pid = 4242;
  s.start_ticks = 777;
  s.status = TW_STATUS_TRAINING;
  s.rank = 9;
  s.local_rank = 1;
  s.world_size = 16;
  s.started_at_ms = kNow - 60'000;
  s.status_changed_ms = kNow - 50'000;
  s.job = "llama";
  s.master_addr = "10.0.0.1";
  s.step = 120;
  s.step_reports = 121;
  s.present = TW_FIELD_LOSS | TW_FIELD_TOKENS;
  s.has_identity = true;
  s.run_id = "3f2c";
  return s;
}

std::string problem_of(const SlotSnapshot& s) { return slot_problem(s, 1); }

TEST(SlotCheck, AValidSlotHasNoProblem) { EXPECT_EQ(problem_of(valid_slot()), ""); }

TEST(SlotCheck, OwnerNamesAProcess) {
  auto s = valid_slot();
  s.pid = 0;
  EXPECT_NE(problem_of(s).find("names no process"), std::string::npos);
  s = valid_slot();
  s.start_ticks = 0;
  EXPECT_NE(problem_of(s).find("names no process"), std::string::npos);
}

TEST(SlotCheck, RankLiesWithinTheWorldAndTheSlotIsItsLocalRank) {
  auto s = valid_slot();
  s.world_size = 0;
  EXPECT_EQ(problem_of(s), "world size 0 is outside [1, 16777216]");
  s = valid_slot();
  s.rank = 1588945316;
  EXPECT_EQ(problem_of(s), "rank 1588945316 is outside world size 16");
  s.rank = -1;
  EXPECT_EQ(problem_of(s), "rank -1 is outside world size 16");
  s = valid_slot();
  s.local_rank = 2;
  EXPECT_EQ(problem_of(s), "local rank 2 is not the slot's number");
}

TEST(SlotCheck, EnumsAreOnesTheLibraryWrites) {
  auto s = valid_slot();
  s.status = 6;
  EXPECT_EQ(problem_of(s), "status 6 is unknown");
  s = valid_slot();
  s.checkpoint_state = static_cast<CheckpointState>(9);
  EXPECT_EQ(problem_of(s), "checkpoint state 9 is unknown");
  s = valid_slot();
  s.present = 1u << 20;
  EXPECT_EQ(problem_of(s), "present fields 1048576 are unknown");
}

TEST(SlotCheck, StepsAreAtLeastMinusOne) {
  auto s = valid_slot();
  s.step = -2563689611442653142;
  EXPECT_EQ(problem_of(s), "step -2563689611442653142 is below -1");
  s = valid_slot();
  s.checkpoint_step = -5;
  EXPECT_EQ(problem_of(s), "checkpoint step -5 is below -1");
  s = valid_slot();
  s.nonfinite_total = 500;  // more NaN steps than steps
  EXPECT_NE(problem_of(s).find("non-finite losses are counted past"), std::string::npos);
}

TEST(SlotCheck, TimesLieWithinTheCalendarAndNotLongBeforeTheStart) {
  auto s = valid_slot();
  s.started_at_ms = 12;
  EXPECT_NE(problem_of(s).find("start time 12 is outside"), std::string::npos);
  s = valid_slot();
  s.started_at_ms = kLatestSlotMs + 1;
  EXPECT_NE(problem_of(s).find("start time"), std::string::npos);
  // 0 is "never" for the other times, but a slot always has a start (found by the fuzzer:
  // a start of 0 passed, and every check after it was skipped).
  s = valid_slot();
  s.started_at_ms = 0;
  s.master_addr = "\x80";
  EXPECT_EQ(problem_of(s), "start time 0 is outside [" + std::to_string(kEarliestSlotMs) + ", " +
                               std::to_string(kLatestSlotMs) + "]");
  s = valid_slot();
  s.error_ms = s.started_at_ms - 2 * kSlotClockSlack;
  EXPECT_NE(problem_of(s).find("error time"), std::string::npos);
  s = valid_slot();
  s.status_changed_ms = s.started_at_ms - 5'000;  // a clock stepped back 5 s: fine
  s.checkpoint_end_ms = 0;                        // never: fine
  EXPECT_EQ(problem_of(s), "");
}

TEST(SlotCheck, IdentityTextIsUtf8ThatEndsWithinItsField) {
  auto s = valid_slot();
  s.job =
      "ll\xff"
      "ama";
  EXPECT_EQ(problem_of(s), "job is not UTF-8");
  s = valid_slot();
  s.master_addr = std::string(64, 'a');  // 8 words with no NUL
  EXPECT_EQ(problem_of(s), "master address does not end within its field");
  s = valid_slot();
  s.run_id = "\xed\xa0\x80";  // a UTF-16 surrogate
  EXPECT_EQ(problem_of(s), "run id is not UTF-8");
}

TEST(SlotCheck, FreeTextIsRepairedNotRefused) {
  auto s = valid_slot();
  s.error = "RuntimeError: caf\xe9";  // Latin-1 from a C program
  s.gauges.push_back({"l\xffr", 1.0});
  EXPECT_EQ(problem_of(s), "");
  repair_slot_text(s);
  EXPECT_EQ(s.error, "RuntimeError: caf\xef\xbf\xbd");
  EXPECT_EQ(s.gauges[0].name, "l\xef\xbf\xbdr");
}

TEST(SlotCheck, CountersNeverGoBackForOneOwner) {
  auto before = valid_slot();
  auto now = before;
  now.step_reports += 10;
  EXPECT_EQ(slot_regression(before, now), "");
  now.step_reports = before.step_reports - 1;
  EXPECT_EQ(slot_regression(before, now), "step calls went back from 121 to 120");
  now = before;
  now.started_at_ms += 1;
  EXPECT_NE(slot_regression(before, now).find("start time moved"), std::string::npos);
  now = before;
  before.tokens = 100;
  EXPECT_EQ(slot_regression(before, now), "tokens went back from 100 to 0");
}

TEST(SlotCheck, ASlotTheLibraryWroteKeepsEveryInvariant) {
  TempDir tmp;
  tw_options o{};
  o.struct_size = sizeof o;
  o.job = "job";
  o.dir = tmp.path().c_str();
  o.rank = 5;
  o.rank_set = 1;
  o.local_rank = 1;
  o.local_rank_set = 1;
  o.world_size = 8;
  o.world_size_set = 1;
  tw_handle* h = nullptr;
  ASSERT_EQ(tw_open(&o, &h), TW_OK);
  tw_set_status(h, TW_STATUS_TRAINING);
  tw_step(h, 3, 0.5);
  tw_checkpoint_begin(h, 3, "/ckpt/step-3");
  tw_checkpoint_end(h, 1, 1024);
  // 300 bytes of two-byte characters: cut at the field's end, never inside a character.
  std::string long_error;
  for (int i = 0; i < 150; ++i) long_error += "\xc3\xa9";
  tw_error(h, long_error.c_str());
  auto file = SlotFile::open_for_reading(slot_file_path(tmp.path(), "job"));
  ASSERT_TRUE(file.ok());
  SlotSnapshot s;
  ASSERT_EQ(read_slot(*file->slot(1), &s), ReadResult::kOk);
  EXPECT_EQ(slot_problem(s, 1), "");
  EXPECT_EQ(s.error.size(), 230u);  // 115 whole characters in the 231 bytes the field keeps
  EXPECT_EQ(utf8_valid_prefix(s.error), s.error.size());
  tw_close(h);
}

// Random bytes over a slot (what a stray write leaves) break an invariant: a thousand
// seeds, none read as a rank.
TEST(SlotCheck, RandomBytesAreNeverAValidSlot) {
  std::mt19937_64 rng(27);
  alignas(Slot) unsigned char bytes[kSlotSize];
  for (int round = 0; round < 1000; ++round) {
    for (auto& b : bytes) b = static_cast<unsigned char>(rng());
    const auto* slot = reinterpret_cast<const Slot*>(bytes);
    SlotSnapshot s;
    if (read_slot(*slot, &s, 1) != ReadResult::kOk) continue;
    EXPECT_NE(slot_problem(s, 3), "") << "round " << round;
  }
}

}  // namespace
}  // namespace trainwatch::reporter
