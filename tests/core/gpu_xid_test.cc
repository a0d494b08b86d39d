// The XID table and the words for NVML's numbers, as the findings and /health use them.
#include "core/gpu_xid.h"

#include <gtest/gtest.h>

#include "core/gpu_terms.h"

namespace trainwatch {
namespace {

TEST(GpuXid, NvidiasImmediateActionsAndWhoseFaultItIs) {
  EXPECT_EQ(xid_sentence(79), "XID 79, the GPU fell off the bus \u2014 NVIDIA: reboot the node");
  EXPECT_EQ(describe_xid(79).cls, XidClass::kNodeFault);
  EXPECT_EQ(describe_xid(48).action, XidAction::kXid48Workflow);
  EXPECT_EQ(describe_xid(95).action, XidAction::kResetGpu);
  EXPECT_EQ(describe_xid(94).cls, XidClass::kApplicationHit)
      << "a contained error: restart, the node is fine";
  EXPECT_EQ(describe_xid(63).cls, XidClass::kInformational);
  for (unsigned code : {13u, 31u, 43u, 45u}) EXPECT_TRUE(is_application_xid(code)) << code;
  for (unsigned code : {48u, 79u, 94u, 119u}) EXPECT_FALSE(is_application_xid(code)) << code;
  EXPECT_EQ(describe_xid(146).action, XidAction::kNvlink5Workflow) << "a run of codes shares its row";
}

TEST(GpuXid, ACodeOutsideTheCatalogIsTheNodesFault) {
  const XidInfo x = describe_xid(999);
  EXPECT_FALSE(x.known);
  EXPECT_EQ(x.cls, XidClass::kNodeFault);
  EXPECT_EQ(xid_sentence(999), "XID 999, not in NVIDIA's catalog \u2014 NVIDIA: contact NVIDIA support");
  EXPECT_FALSE(describe_xid(1).known) << "listed as unused";
}

TEST(GpuTerms, ClockEventReasonsAndRecoveryActions) {
  EXPECT_EQ(clock_event_words(0x1 | 0x40 | 0x1000),
            (std::vector<std::string_view>{"gpu_idle", "hw_thermal_slowdown"}));
  EXPECT_EQ(slowing_reasons_text(0x1 | 0x4 | 0x80), "SW power cap, HW power brake slowdown");
  EXPECT_EQ(slowing_reasons_text(0x1 | 0x10), "");
  ASSERT_TRUE(recovery_action_of(2));
  EXPECT_EQ(recovery_action_word(*recovery_action_of(2)), "node_reboot");
  EXPECT_EQ(recovery_action_from_word("drain_and_reset"), GpuRecoveryAction::kDrainAndReset);
  EXPECT_FALSE(recovery_action_of(9));
}

}  // namespace
}  // namespace trainwatch
