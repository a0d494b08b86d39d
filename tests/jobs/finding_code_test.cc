// The finding codes' one table: each code has its own text and reads back from it; a text
// the table does not hold reads as nothing, and a stored interruption with one keeps its
// cause under kUnknown. The texts are the API's: a few are pinned as the docs show them.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "jobs/finding_code.h"
#include "jobs/job_memo.h"

namespace trainwatch::jobs {
namespace {

constexpr int kLast = static_cast<int>(FindingCode::kIbLinkDowned);

TEST(FindingCode, EveryCodeHasItsOwnTextAndReadsBackFromIt) {
  std::set<std::string> texts;
  for (int i = 0; i <= kLast; ++i) {
    const auto code = static_cast<FindingCode>(i);
    const std::string text(to_string(code));
    EXPECT_FALSE(text.empty()) << i;
    EXPECT_TRUE(texts.insert(text).second) << "two codes are written " << text;
    EXPECT_EQ(finding_code_from_string(text), code) << text;
  }
  EXPECT_EQ(texts.size(), static_cast<size_t>(kLast) + 1);
}

TEST(FindingCode, TheTextsAreTheApis) {
  EXPECT_EQ(to_string(FindingCode::kRankGone), "rank_gone");
  EXPECT_EQ(to_string(FindingCode::kCollectiveMismatch), "collective_mismatch");
  EXPECT_EQ(to_string(FindingCode::kGpuRowRemapPending), "gpu_row_remap_pending");
  EXPECT_EQ(to_string(FindingCode::kIbLinkDowned), "ib_link_downed");
  EXPECT_EQ(to_string(FindingCode::kUnknown), "unknown");
}

TEST(FindingCode, AnUnknownTextReadsAsNothing) {
  EXPECT_EQ(finding_code_from_string("rank_vanished_into_thin_air"), std::nullopt);
  EXPECT_EQ(finding_code_from_string(""), std::nullopt);
  EXPECT_EQ(finding_code_from_string("RANK_GONE"), std::nullopt);
  EXPECT_EQ(finding_code_from_string("rank_gone "), std::nullopt);
}

TEST(FindingCode, TheFamiliesTheLedgerAndTheStacksDecideBy) {
  for (int i = 0; i <= kLast; ++i) {
    const auto c = static_cast<FindingCode>(i);
    EXPECT_EQ(is_hang(c), names_waited_for(c) || unplaced_hang(c)) << to_string(c);
    EXPECT_FALSE(names_waited_for(c) && unplaced_hang(c)) << to_string(c);
  }
  EXPECT_TRUE(names_waited_for(FindingCode::kRankStuck));
  EXPECT_TRUE(unplaced_hang(FindingCode::kJobStalled));
  EXPECT_TRUE(suspects_culprit(FindingCode::kRankSuspected));
  EXPECT_FALSE(is_hang(FindingCode::kRankSuspected)) << "a warning before the step timeout is no hang yet";
  EXPECT_TRUE(is_gpu_fault(FindingCode::kNvlinkDown));
  EXPECT_FALSE(is_gpu_fault(FindingCode::kGpuHot));
}

// A memo written by a server that knew a code this one does not: the interruption stays,
// with its cause and message, under "unknown".
TEST(FindingCode, AStoredInterruptionWithAnUnknownCodeIsKept) {
  const std::string memo = R"({"version":1,"attempts":[
    {"number":1,"launcher_attempt":0,"run_id":"a","started_ms":1700000000000}],
    "interruptions":[{"attempt":1,"code":"rank_abducted","kind":"vanished","detail":"by aliens",
      "message":"rank 3 was taken","failed_ms":1700000030000,"detected_ms":1700000031000}],
    "count":1,"attempt_seen":1})";
  JobState job("j");
  InterruptionLedger ledger;
  ASSERT_TRUE(apply_job_memo(memo, job, ledger, MonoTime{}, from_unix_ms(1'700'001'000'000)).ok());
  ASSERT_EQ(ledger.entries().size(), 1u);
  const Interruption& i = ledger.entries().front();
  EXPECT_EQ(i.code, FindingCode::kUnknown);
  EXPECT_EQ(i.cause.kind, InterruptionKind::kVanished);
  EXPECT_EQ(i.message, "rank 3 was taken");
}

}  // namespace
}  // namespace trainwatch::jobs
