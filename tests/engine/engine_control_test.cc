// Pausing, resuming and reloading a running engine, in simulated time: what a user sees
// of the monitor's state and when its checks run.
#include <gtest/gtest.h>

#include "engine_harness.h"

namespace trainwatch::engine {
namespace {

using Starts = std::vector<Millis>;

class EngineControlTest : public testing::EngineHarness {};

TEST_F(EngineControlTest, APausedMonitorIsNotCheckedAndResumingChecksItAtOnce) {
  config_.monitors = {http_monitor("api", Millis(10'000))};
  checkers_.answer("api", false);
  start();
  advance(Millis(1'000));
  ASSERT_EQ(view("api").state.status, MonitorStatus::kDown);
  const int64_t incident = view("api").open_incident.value().id;

  set_paused("api", true);
  advance(Millis(60'000));
  EXPECT_EQ(checkers_.starts_of("api", origin_), Starts{Millis(0)});
  EXPECT_EQ(view("api").state.status, MonitorStatus::kPaused);
  EXPECT_EQ(view("api").open_incident.value().id, incident) << "pausing does not close the incident";

  checkers_.answer("api", true);
  set_paused("api", false);
  EXPECT_EQ(view("api").state.status, MonitorStatus::kPending);
  advance(Millis(0));
  EXPECT_EQ(checkers_.starts_of("api", origin_), (Starts{Millis(0), Millis(61'000)}));
  EXPECT_EQ(view("api").state.status, MonitorStatus::kUp);
  EXPECT_FALSE(view("api").open_incident.has_value());
  advance(Millis(10'000));
  EXPECT_EQ(checkers_.starts_of("api", origin_).back(), Millis(71'000)) << "on a grid from the resume";
}

TEST_F(EngineControlTest, ACheckRunningWhenPausedDoesNotUnpauseTheMonitor) {
  config_.monitors = {http_monitor("api", Millis(10'000))};
  checkers_.answer("api", false, Millis(5'000));
  start();
  advance(Millis(1'000));
  set_paused("api", true);
  advance(Millis(10'000));
  EXPECT_EQ(view("api").state.status, MonitorStatus::kPaused);
  EXPECT_FALSE(view("api").open_incident.has_value());
}

TEST_F(EngineControlTest, APauseIsAnsweredOnlyOnceItsStateIsCommitted) {
  config_.monitors = {http_monitor("api", Millis(10'000))};
  checkers_.answer("api", true);
  start();
  advance(Millis(1'000));
  auto_commit_ = false;
  std::optional<Status> answered;
  engine_.set_paused("api", true, [&](const Status& s) { answered = s; });
  settle();
  EXPECT_FALSE(answered.has_value()) << "answered before the store committed the pause";
  ASSERT_EQ(store_.waiting(), 1u);
  ASSERT_TRUE(store_.answer(Ok{}));
  ASSERT_TRUE(answered.has_value());
  EXPECT_TRUE(answered->ok());
}

TEST_F(EngineControlTest, APauseTheStoreRefusesIsAnsweredWithTheRefusalAndStoredWhenAskedAgain) {
  config_.monitors = {http_monitor("api", Millis(10'000))};
  checkers_.answer("api", true);
  start();
  advance(Millis(1'000));
  auto_commit_ = false;
  std::optional<Status> answered;
  engine_.set_paused("api", true, [&](const Status& s) { answered = s; });
  settle();
  ASSERT_TRUE(store_.answer(make_error("store.unavailable", "disk full")));
  ASSERT_TRUE(answered.has_value());
  EXPECT_EQ(answered->error().code, "store.unavailable");
  // The pause is in force here; a client that heard 503 asks again, and that is stored.
  EXPECT_EQ(view("api").state.status, MonitorStatus::kPaused);
  answered.reset();
  engine_.set_paused("api", true, [&](const Status& s) { answered = s; });
  settle();
  EXPECT_FALSE(answered.has_value());
  ASSERT_NE(store_.front<SaveState>(), nullptr);
  EXPECT_EQ(store_.front<SaveState>()->state.status, MonitorStatus::kPaused);
  ASSERT_TRUE(store_.answer(Ok{}));
  ASSERT_TRUE(answered.has_value());
  EXPECT_TRUE(answered->ok());
}

TEST_F(EngineControlTest, PausingAnUnknownMonitorIsNotFound) {
  config_.monitors = {http_monitor("api", Millis(10'000))};
  start();
  std::optional<Status> answered;
  engine_.set_paused("nope", true, [&](const Status& s) { answered = s; });
  settle();
  ASSERT_TRUE(answered.has_value());
  EXPECT_EQ(answered->error().code, "monitor.not_found");
}

TEST_F(EngineControlTest, ReloadKeepsTheStateAndScheduleOfUnchangedMonitors) {
  config_.monitors = {http_monitor("a", Millis(10'000)), http_monitor("b", Millis(10'000)),
                      http_monitor("gone", Millis(10'000))};
  checkers_.answer("a", false);
  start();
  advance(Millis(12'000));  // a: checked at 0 and 10 s; b at 3.3 s; gone at 6.7 s
  ASSERT_EQ(view("a").state.status, MonitorStatus::kDown);
  ASSERT_EQ(view("b").state.status, MonitorStatus::kUp);
  const MonitorView a_before = view("a");
  const MonitorView b_before = view("b");

  // "a" only changes whom it notifies; "b" checks another URL; "gone" is removed; "new" comes.
  Config next = config_;
  next.monitors[0].notify = {"ops"};
  std::get<HttpCheckSpec>(next.monitors[1].spec).url = "http://127.0.0.1:9/elsewhere";
  next.monitors[2] = http_monitor("new", Millis(10'000));
  bool applied = false;
  engine_.reload(next, [&] { applied = true; });
  settle();
  ASSERT_TRUE(applied);

  EXPECT_EQ(view("a").state.status, MonitorStatus::kDown);
  EXPECT_EQ(view("a").open_incident.value().id, a_before.open_incident.value().id);
  EXPECT_EQ(view("a").config->notify, std::vector<std::string>{"ops"});
  EXPECT_EQ(view("b").state.status, MonitorStatus::kUp) << "a changed check keeps its state";
  EXPECT_EQ(view("b").state.since, b_before.state.since);
  EXPECT_EQ(view("new").state.status, MonitorStatus::kPending);
  EXPECT_FALSE(engine_.monitor("gone").has_value());

  advance(Millis(20'000));
  // "a" keeps its grid; "b" restarts its schedule, spread as at start (1 of 3 over 10 s).
  EXPECT_EQ(checkers_.starts_of("a", origin_),
            (Starts{Millis(0), Millis(10'000), Millis(20'000), Millis(30'000)}));
  EXPECT_EQ(checkers_.starts_of("b", origin_), (Starts{Millis(3'333), Millis(15'333), Millis(25'333)}));
  EXPECT_EQ(checkers_.starts_of("gone", origin_), Starts{Millis(6'666)});
  EXPECT_EQ(checkers_.starts_of("new", origin_), (Starts{Millis(18'666), Millis(28'666)}));
}

TEST_F(EngineControlTest, TheResultOfACheckThatAReloadChangedIsNotApplied) {
  config_.monitors = {http_monitor("api", Millis(60'000))};
  checkers_.answer("api", false, Millis(5'000));  // the old URL is down
  start();
  advance(Millis(1'000));

  Config next = config_;
  std::get<HttpCheckSpec>(next.monitors[0].spec).url = "http://127.0.0.1:9/fixed";
  checkers_.answer("api", true, Millis(5'000));
  engine_.reload(next);
  advance(Millis(4'500));  // the old check answered at 5 s; the new one, started at 1 s, runs
  EXPECT_EQ(view("api").state.status, MonitorStatus::kPending);
  EXPECT_FALSE(view("api").open_incident.has_value()) << "no incident for a URL no longer checked";
  advance(Millis(1'000));
  EXPECT_EQ(view("api").state.status, MonitorStatus::kUp);
}

}  // namespace
}  // namespace trainwatch::engine
