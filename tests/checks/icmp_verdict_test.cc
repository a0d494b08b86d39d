#include "checks/icmp_verdict.h"

#include <gtest/gtest.h>

namespace trainwatch::checks {
namespace {

IcmpCheckSpec spec_with(std::vector<std::string> conditions) {
  IcmpCheckSpec spec;
  spec.host = "gpu-node-7";
  for (const auto& text : conditions) spec.conditions.push_back(*Condition::parse(text));
  return spec;
}

TEST(IcmpVerdict, LossIsAPercentToOneDecimal) {
  EXPECT_EQ(packet_loss_pct({3, 3, 0.1}), 0);
  EXPECT_EQ(packet_loss_pct({3, 2, 0.1}), 33.3);
  EXPECT_EQ(packet_loss_pct({3, 1, 0.1}), 66.7);
  EXPECT_EQ(packet_loss_pct({3, 0, 0}), 100);
}

TEST(IcmpVerdict, WithoutALossConditionOnlySilenceFails) {
  EXPECT_TRUE(judge_echo_round(spec_with({}), "10.0.0.7", {3, 1, 0.4}).ok);
  auto silent = judge_echo_round(spec_with({}), "10.0.0.7", {3, 0, 0});
  EXPECT_FALSE(silent.ok);
  EXPECT_EQ(silent.cause, "no echo reply from 10.0.0.7 (3 sent)");
}

TEST(IcmpVerdict, ConditionsOnLossAndAverageRtt) {
  auto spec = spec_with({"[PACKET_LOSS] == 0", "[RESPONSE_TIME] < 5"});
  EXPECT_TRUE(judge_echo_round(spec, "10.0.0.7", {3, 3, 0.4}).ok);
  auto lossy = judge_echo_round(spec, "10.0.0.7", {3, 2, 7.5});
  EXPECT_FALSE(lossy.ok);
  EXPECT_EQ(lossy.cause, "[PACKET_LOSS] == 33.3, expected 0; [RESPONSE_TIME] == 7.5, expected < 5");
}

}  // namespace
}  // namespace trainwatch::checks
