#include "engine/state_machine.h"

#include <gtest/gtest.h>

#include "fakes/manual_clock.h"

namespace trainwatch::engine {
namespace {

class StateMachineTest : public ::testing::Test {
 protected:
  CheckResult result(bool ok, std::string cause = {}) {
    clock_.advance(Millis(60'000));
    CheckResult r;
    r.at = clock_.system_time();
    r.ok = ok;
    r.cause = std::move(cause);
    r.latency_ms = 12;
    return r;
  }
  StateStep apply(bool ok, int retries, std::string cause = {}) {
    auto step = next_state(state_, result(ok, std::move(cause)), retries);
    state_ = step.state;
    return step;
  }
  testing::ManualClock clock_;
  MonitorState state_;
};

TEST_F(StateMachineTest, PendingBecomesUpOnFirstSuccess) {
  auto step = apply(true, 1);
  EXPECT_EQ(step.transition, Transition::kChanged);
  EXPECT_EQ(state_.status, MonitorStatus::kUp);
  EXPECT_EQ(state_.since, clock_.system_time());
  EXPECT_EQ(state_.last_latency_ms, 12);
}

TEST_F(StateMachineTest, DownOnlyAfterRetriesPlusOneFailures) {
  apply(true, 2);
  EXPECT_EQ(apply(false, 2, "timeout after 10s").transition, Transition::kChangePending);
  EXPECT_EQ(apply(false, 2, "timeout after 10s").transition, Transition::kChangePending);
  EXPECT_EQ(state_.status, MonitorStatus::kUp);
  auto step = apply(false, 2, "connect: connection refused");
  EXPECT_EQ(step.transition, Transition::kChanged);
  EXPECT_EQ(state_.status, MonitorStatus::kDown);
  EXPECT_EQ(state_.consecutive_failures, 3);
  EXPECT_EQ(state_.last_error, "connect: connection refused");
  EXPECT_EQ(state_.since, clock_.system_time());
}

TEST_F(StateMachineTest, ASuccessBetweenFailuresResetsTheCount) {
  apply(true, 1);
  apply(false, 1);
  apply(true, 1);
  EXPECT_EQ(apply(false, 1).transition, Transition::kChangePending);
  EXPECT_EQ(state_.status, MonitorStatus::kUp);
}

TEST_F(StateMachineTest, FirstSuccessAfterDownIsUp) {
  apply(false, 0);
  ASSERT_EQ(state_.status, MonitorStatus::kDown);
  auto since_down = state_.since;
  EXPECT_EQ(apply(false, 0).transition, Transition::kUnchanged);
  EXPECT_EQ(state_.since, since_down);
  EXPECT_EQ(apply(true, 0).transition, Transition::kChanged);
  EXPECT_EQ(state_.status, MonitorStatus::kUp);
  EXPECT_TRUE(state_.last_error.empty());
}

TEST_F(StateMachineTest, PendingGoesDownWithoutEverBeingUp) {
  EXPECT_EQ(apply(false, 1).transition, Transition::kChangePending);
  EXPECT_EQ(state_.status, MonitorStatus::kPending);
  EXPECT_EQ(apply(false, 1).transition, Transition::kChanged);
  EXPECT_EQ(state_.status, MonitorStatus::kDown);
}

TEST_F(StateMachineTest, PausedIgnoresResults) {
  state_.status = MonitorStatus::kPaused;
  auto step = apply(false, 0);
  EXPECT_EQ(step.transition, Transition::kUnchanged);
  EXPECT_EQ(state_.status, MonitorStatus::kPaused);
  EXPECT_EQ(state_.consecutive_failures, 0);
}

}  // namespace
}  // namespace trainwatch::engine
