// depends_on end to end in simulated time: the engine decides what caused an incident, the
// planner what goes to the outbox. A node's /health check depends on its job's monitor.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include "alerting/event.h"
#include "alerting/planner.h"
#include "config/loader.h"
#include "engine/engine.h"
#include "fakes/fake_checkers.h"
#include "fakes/fake_store.h"
#include "fakes/manual_clock.h"

namespace trainwatch::alerting {
namespace {

using std::chrono::seconds;

class DependencyFlowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LoadedConfig loaded = load_config_text(
        "monitors:\n"
        "  - {name: job, type: tcp, host: h, port: 1, interval: 10s, notify: [ops]}\n"
        "  - {name: node, type: tcp, host: h, port: 2, interval: 10s, notify: [ops], depends_on: [job]}\n"
        "notifications:\n"
        "  - {name: ops, type: ntfy, topic: t}\n",
        "c.yaml");
    ASSERT_TRUE(loaded.config);
    planner_.configure(*loaded.config, {"ops"});
    ASSERT_TRUE(engine_.start(*loaded.config).ok());
    settle();
  }

  // Runs what was posted and commits every write, keeping what the commits carried.
  void settle() {
    for (;;) {
      io_.restart();
      bool progressed = io_.poll() > 0;
      while (store_.waiting() > 0) {
        if (const auto* record = store_.front<RecordResult>()) {
          for (const auto& row : record->outbox) outbox_.push_back(row);
          if (record->opened) opened_.push_back(*record->opened);
        }
        store_.answer(Ok{});
        progressed = true;
      }
      if (!progressed) return;
    }
  }

  void advance(Millis d) {
    const MonoTime target = clock_.monotonic_time() + d;
    while (auto next = clock_.next_deadline()) {
      if (*next > target) break;
      clock_.advance(std::max(Millis(0), std::chrono::ceil<Millis>(*next - clock_.monotonic_time())));
      settle();
    }
    clock_.advance(std::chrono::ceil<Millis>(target - clock_.monotonic_time()));
    settle();
  }

  MonitorStatus status(const std::string& name) const { return engine_.monitor(name)->state.status; }
  std::vector<std::string> outbox_of(const std::string& monitor) const {
    std::vector<std::string> kinds;
    for (const auto& row : outbox_) {
      if (row.monitor == monitor) kinds.push_back(row.kind);
    }
    return kinds;
  }
  const Incident* incident_of(const std::string& monitor) const {
    for (auto it = opened_.rbegin(); it != opened_.rend(); ++it) {
      if (it->monitor == monitor) return &*it;
    }
    return nullptr;
  }

  testing::ManualClock clock_;
  boost::asio::io_context io_;
  testing::FakeStore store_;
  testing::FakeCheckers checkers_{clock_, clock_};
  AlertPlanner planner_{clock_, [] {}};
  engine::Engine engine_{io_, clock_, clock_, store_, checkers_, &planner_};
  std::vector<NewDelivery> outbox_;
  std::vector<Incident> opened_;
};

TEST_F(DependencyFlowTest, AChildFailingWhileItsParentIsDownIsCausedByItAndSendsNothing) {
  checkers_.answer("job", false);
  advance(seconds(10));
  ASSERT_EQ(status("job"), MonitorStatus::kDown);
  checkers_.answer("node", false);
  advance(seconds(10));
  ASSERT_EQ(status("node"), MonitorStatus::kDown);

  ASSERT_NE(incident_of("node"), nullptr);
  EXPECT_EQ(incident_of("node")->caused_by, "job");
  EXPECT_EQ(incident_of("job")->caused_by, "");
  EXPECT_EQ(outbox_of("job"), std::vector<std::string>{"down"});
  EXPECT_TRUE(outbox_of("node").empty());
  // The parent's alerts name it: what the dispatcher asks when it sends one.
  EXPECT_EQ(engine_.down_dependents("job"), std::vector<std::string>{"node"});

  // Both recover: the parent says so; the child, which never alerted, stays quiet.
  checkers_.answer("job", true);
  checkers_.answer("node", true);
  advance(seconds(10));
  EXPECT_EQ(outbox_of("job"), (std::vector<std::string>{"down", "up"}));
  EXPECT_TRUE(outbox_of("node").empty());
}

TEST_F(DependencyFlowTest, AChildStillDownWhenItsParentRecoversAlertsOnItsOwn) {
  checkers_.answer("job", false);
  advance(seconds(10));
  checkers_.answer("node", false);
  advance(seconds(10));
  ASSERT_TRUE(outbox_of("node").empty());

  checkers_.answer("job", true);
  advance(seconds(10));
  ASSERT_EQ(status("job"), MonitorStatus::kUp);
  // The node's own check comes 5 s after the job's (first checks are spread): the first
  // one that finds it down with the job up releases its DOWN, and not before.
  EXPECT_TRUE(outbox_of("node").empty());
  advance(seconds(10));
  ASSERT_EQ(outbox_of("node"), std::vector<std::string>{"down"});
  auto event = event_from_json(outbox_.back().event);
  ASSERT_TRUE(event.ok());
  EXPECT_EQ(event->monitor, "node");

  // From then on it is an incident like any other: one DOWN, then its recovery.
  advance(seconds(30));
  EXPECT_EQ(outbox_of("node"), std::vector<std::string>{"down"});
  checkers_.answer("node", true);
  advance(seconds(10));
  EXPECT_EQ(outbox_of("node"), (std::vector<std::string>{"down", "up"}));
}

TEST_F(DependencyFlowTest, AChildDownBeforeItsParentKeepsItsOwnAlertAndIsListedByTheParent) {
  checkers_.answer("node", false);
  advance(seconds(10));
  ASSERT_EQ(status("node"), MonitorStatus::kDown);
  checkers_.answer("job", false);
  advance(seconds(10));
  ASSERT_EQ(status("job"), MonitorStatus::kDown);

  // Nothing explained it when it failed: its incident and its alert are its own.
  EXPECT_EQ(incident_of("node")->caused_by, "");
  EXPECT_EQ(outbox_of("node"), std::vector<std::string>{"down"});
  EXPECT_EQ(outbox_of("job"), std::vector<std::string>{"down"});
  EXPECT_EQ(engine_.down_dependents("job"), std::vector<std::string>{"node"});
}

}  // namespace
}  // namespace trainwatch::alerting
