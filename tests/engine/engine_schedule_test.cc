// When the engine starts checks, in simulated time: on a fixed grid from the first check,
// spread at start, and never more at once than server.max_checks_in_flight.
#include <gtest/gtest.h>

#include "engine_harness.h"

namespace trainwatch::engine {
namespace {

using Starts = std::vector<Millis>;

class EngineScheduleTest : public testing::EngineHarness {};

TEST_F(EngineScheduleTest, ChecksStartOnTheIntervalGridWhileEachTakesLong) {
  config_.monitors = {http_monitor("api", Millis(10'000))};
  checkers_.answer("api", true, Millis(3'000));
  start();
  advance(Millis(45'000));
  // Scheduled from the due time, not from the end of the previous check (0, 13, 26 s...).
  EXPECT_EQ(checkers_.starts_of("api", origin_),
            (Starts{Millis(0), Millis(10'000), Millis(20'000), Millis(30'000), Millis(40'000)}));
  EXPECT_EQ(view("api").state.status, MonitorStatus::kUp);
}

TEST_F(EngineScheduleTest, ACheckLongerThanItsIntervalSkipsSlotsAndStaysOnTheGrid) {
  config_.monitors = {http_monitor("slow", Millis(10'000))};
  checkers_.answer("slow", true, Millis(25'000));
  start();
  advance(Millis(65'000));
  // Due at 10 s and 20 s while the first still runs: skipped, not queued up behind it.
  EXPECT_EQ(checkers_.starts_of("slow", origin_), (Starts{Millis(0), Millis(30'000), Millis(60'000)}));
  EXPECT_EQ(checkers_.max_running(), 1u);
}

// The process is stopped for 1.5 s just before a check (SIGSTOP, a starved moment): that
// check starts late, and the next is not half a second after it but on the slot after.
TEST_F(EngineScheduleTest, ACheckStartedLateByAPauseIsNotFollowedByAnotherAtOnce) {
  config_.monitors = {http_monitor("api", Millis(2'000))};
  start();
  advance(Millis(1'900));
  clock_.stall(Millis(1'500));  // due at 2 s; the process runs again at 3.4 s
  advance(Millis(6'000));
  EXPECT_EQ(checkers_.starts_of("api", origin_),
            (Starts{Millis(0), Millis(3'400), Millis(6'000), Millis(8'000)}));
}

// A check its checker did not start (the lease had lapsed by its first packet, checker.h)
// reports that it was not started: no verdict on the monitor, even while the engine owns
// it again.
TEST_F(EngineScheduleTest, ACheckThatWasNotStartedIsNoVerdictOnTheMonitor) {
  config_.monitors = {http_monitor("api", Millis(2'000))};
  start();
  advance(Millis(1'000));
  ASSERT_EQ(view("api").state.status, MonitorStatus::kUp);
  checkers_.answer_not_started("api");
  advance(Millis(6'000));
  EXPECT_EQ(view("api").state.status, MonitorStatus::kUp) << "three reports, none a failure";
  checkers_.answer("api", false);
  advance(Millis(2'000));
  EXPECT_EQ(view("api").state.status, MonitorStatus::kDown) << "a failure that was checked still is one";
}

// A job no rank of which has reported: neither up nor down until a first real result.
TEST_F(EngineScheduleTest, APendingResultLeavesTheMonitorPendingUntilAFirstRealOne) {
  config_.monitors = {http_monitor("job", Millis(1'000))};
  checkers_.answer_pending("job");
  start();
  advance(Millis(5'000));
  EXPECT_GE(checkers_.starts_of("job", origin_).size(), 4u);
  EXPECT_EQ(view("job").state.status, MonitorStatus::kPending) << "nothing to judge yet";
  EXPECT_FALSE(view("job").state.last_check);
  checkers_.answer("job", false);
  advance(Millis(1'000));
  EXPECT_EQ(view("job").state.status, MonitorStatus::kDown) << "its start-up timeout passed";
}

TEST_F(EngineScheduleTest, FirstChecksAreSpreadAcrossTheInterval) {
  for (const char* name : {"a", "b", "c", "d"}) config_.monitors.push_back(http_monitor(name, Millis(8'000)));
  start();
  advance(Millis(15'000));
  EXPECT_EQ(checkers_.starts_of("a", origin_), (Starts{Millis(0), Millis(8'000)}));
  EXPECT_EQ(checkers_.starts_of("b", origin_), (Starts{Millis(2'000), Millis(10'000)}));
  EXPECT_EQ(checkers_.starts_of("c", origin_), (Starts{Millis(4'000), Millis(12'000)}));
  EXPECT_EQ(checkers_.starts_of("d", origin_), (Starts{Millis(6'000), Millis(14'000)}));
}

TEST_F(EngineScheduleTest, LongIntervalsSpreadFirstChecksOverTheFirstTenSeconds) {
  for (const char* name : {"a", "b"}) config_.monitors.push_back(http_monitor(name, Millis(3'600'000)));
  start();
  advance(Millis(10'000));
  EXPECT_EQ(checkers_.starts_of("a", origin_), Starts{Millis(0)});
  EXPECT_EQ(checkers_.starts_of("b", origin_), Starts{Millis(5'000)});
}

TEST_F(EngineScheduleTest, AtTheBoundDueChecksWaitAndStartInTheOrderTheyBecameDue) {
  config_.server.max_checks_in_flight = 2;
  // Due at 0, 2.5, 5 and 7.5 s: "d" becomes due before "c".
  for (const char* name : {"a", "b", "d", "c"}) {
    config_.monitors.push_back(http_monitor(name, Millis(60'000)));
    checkers_.answer(name, true, std::nullopt);  // each runs until the test finishes it
  }
  start();
  advance(Millis(8'000));
  ASSERT_EQ(checkers_.running(), 2u);
  EXPECT_EQ(engine_.stats().checks_waiting, 2u);

  ASSERT_TRUE(checkers_.finish("b"));
  settle();
  ASSERT_TRUE(checkers_.finish("a"));
  settle();
  std::vector<std::string> order;
  for (const auto& s : checkers_.started()) order.push_back(s.monitor);
  EXPECT_EQ(order, (std::vector<std::string>{"a", "b", "d", "c"}));
  EXPECT_EQ(checkers_.max_running(), 2u);
  EXPECT_EQ(engine_.stats().checks_waiting, 0u);
  // They started when a slot freed, 0.5 s after "c" was due.
  EXPECT_EQ(checkers_.starts_of("c", origin_), Starts{Millis(8'000)});
  EXPECT_GE(engine_.stats().max_start_delay_ms, 500.0);
}

}  // namespace
}  // namespace trainwatch::engine
