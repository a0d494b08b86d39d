// When the agent's node report goes: on schedule, and sooner for news, never more often
// than the gaps allow. Instants are chosen by the test; nothing sleeps.
#include "agent/push_plan.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "trainwatch/trainwatch.h"

namespace trainwatch::agent {
namespace {

constexpr Millis kEvery{5'000};
const MonoTime kStart = MonoTime{} + Millis{1'000'000};

MonoTime at(int64_t ms) { return kStart + Millis{ms}; }

// One training rank whose library counts non-finite losses.
NodeSnapshot node_with(uint64_t nonfinite_total, uint64_t owner = 7) {
  NodeSnapshot node;
  RankView r;
  r.slot.owner = owner;
  r.slot.rank = 0;
  r.slot.status = TW_STATUS_TRAINING;
  r.slot.has_nonfinite = true;
  r.slot.nonfinite_total = nonfinite_total;
  r.alive = true;
  r.state = 'S';
  node.ranks.push_back(r);
  return node;
}

// The plan after the agent's first sample and the report that went at once.
PushPlan started(uint64_t nonfinite_total = 0) {
  PushPlan plan(kEvery, kStart);
  plan.note(node_with(nonfinite_total));
  EXPECT_EQ(plan.due(), kStart) << "the first report goes at start";
  plan.sent(kStart);
  return plan;
}

TEST(PushPlan, WithoutNewsTheReportWaitsForItsInterval) {
  PushPlan plan = started(3);  // a count from before this agent started is no news
  EXPECT_FALSE(plan.note(node_with(3)));
  EXPECT_EQ(plan.due(), at(5'000));
}

TEST(PushPlan, ANewNonFiniteLossSendsTheReportAtOnce) {
  PushPlan plan = started();
  EXPECT_FALSE(plan.note(node_with(0)));
  // The sampler sees the first NaN 1.2 s after the last report: due now, not at 5 s.
  EXPECT_TRUE(plan.note(node_with(1)));
  EXPECT_LE(plan.due(), at(1'200));
  plan.sent(at(1'200));
  EXPECT_EQ(plan.due(), at(6'200));
  // Another one 200 ms later: due 250 ms after the report that just went.
  EXPECT_TRUE(plan.note(node_with(2)));
  EXPECT_EQ(plan.due(), at(1'450));
}

TEST(PushPlan, ANanAtEveryStepSendsAtMostOneReportPer250ms) {
  PushPlan plan = started();
  std::vector<MonoTime> sent;
  uint64_t total = 0;
  // 10 s of samples every 200 ms, each showing more NaNs; the pusher sends whenever due.
  for (int64_t ms = 1; ms <= 10'000; ++ms) {
    if (ms % 200 == 0) plan.note(node_with(total += 20));
    if (at(ms) >= plan.due()) {
      plan.sent(at(ms));
      sent.push_back(at(ms));
    }
  }
  ASSERT_GE(sent.size(), 30u) << "the rising count keeps the reports coming";
  EXPECT_LE(sent.size(), 40u);
  for (size_t i = 1; i < sent.size(); ++i) EXPECT_GE(sent[i] - sent[i - 1], kNonfinitePushGap) << i;
}

TEST(PushPlan, ARestartedRankAlreadyCountingNonFiniteLossesIsNews) {
  PushPlan plan = started();
  EXPECT_TRUE(plan.note(node_with(4, /*owner=*/8)));
  EXPECT_LE(plan.due(), at(0) + kNonfinitePushGap);
}

TEST(PushPlan, AStatusChangeIsNewsWithItsOwnGap) {
  PushPlan plan = started();
  NodeSnapshot failed = node_with(0);
  failed.ranks[0].slot.status = TW_STATUS_FAILED;
  EXPECT_TRUE(plan.note(failed));
  EXPECT_EQ(plan.due(), at(0) + kMinPushGap);
}

TEST(PushPlan, AStackCapturedForAnOverdueStepIsNews) {
  PushPlan plan = started();
  NodeSnapshot overdue = node_with(0);
  overdue.ranks[0].stack = std::make_shared<const PyStack>();
  EXPECT_TRUE(plan.note(overdue));
  EXPECT_EQ(plan.due(), at(0) + kMinPushGap);
}

}  // namespace
}  // namespace trainwatch::agent
