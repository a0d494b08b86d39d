// Heartbeat monitors in simulated time: a missed ping turns late, then DOWN when its
// deadline passes; pings on the quiet path show the state the state machine gives.
#include <gtest/gtest.h>

#include "engine/state_machine.h"
#include "engine_harness.h"

namespace trainwatch::engine {
namespace {

class EngineHeartbeatTest : public testing::EngineHarness {
 protected:
  // Sends a ping now; returns its answer once the io thread and the store have run.
  Status ping(PingKind kind) {
    Ping p;
    p.kind = kind;
    p.at = clock_.system_time();
    std::optional<Status> answer;
    engine_.record_ping("nightly", p, [&](const Status& s) { answer = s; });
    settle();
    EXPECT_TRUE(answer.has_value());
    return answer.value_or(make_error("test.unanswered", "no answer"));
  }
};

TEST_F(EngineHeartbeatTest, AMissedPingIsLateAfterItsPeriodAndDownAfterItsGrace) {
  config_.monitors = {heartbeat_monitor("nightly", Millis(60'000), Millis(30'000))};
  start();
  ASSERT_TRUE(ping(PingKind::kSuccess).ok());
  ASSERT_EQ(view("nightly").state.status, MonitorStatus::kUp);

  advance(Millis(59'999));
  EXPECT_FALSE(view("nightly").heartbeat->late);
  advance(Millis(2));
  EXPECT_TRUE(view("nightly").heartbeat->late);
  EXPECT_EQ(view("nightly").state.status, MonitorStatus::kUp) << "late is shown, not a failure";

  advance(Millis(29'998));  // 89.999 s after the ping
  EXPECT_EQ(view("nightly").state.status, MonitorStatus::kUp);
  advance(Millis(1));
  const MonitorView down = view("nightly");
  EXPECT_EQ(down.state.status, MonitorStatus::kDown);
  ASSERT_TRUE(down.open_incident.has_value());
  EXPECT_EQ(down.open_incident->cause, "no ping for 1m 30s (expected every 1m, grace 30s)");

  ASSERT_TRUE(ping(PingKind::kSuccess).ok());
  EXPECT_EQ(view("nightly").state.status, MonitorStatus::kUp);
  EXPECT_FALSE(view("nightly").open_incident.has_value());
}

// The store refused writes for two minutes (its pings answered 503): no deadline gets a
// verdict while that lasts, and once it is over the deadline moves by the outage, so the
// heartbeat pinged just before it is not DOWN at its old deadline, and a silent one is,
// as much later as the outage lasted, with a cause that says so.
TEST_F(EngineHeartbeatTest, AStoreOutageMovesTheDeadlineByWhatCameAfterTheLastPing) {
  config_.monitors = {heartbeat_monitor("nightly", Millis(60'000), Millis(30'000))};
  start();
  ASSERT_TRUE(ping(PingKind::kSuccess).ok());  // due at 60 s, DOWN at 90 s
  advance(Millis(10'000));
  WriteHealth refusing;
  refusing.refusing = true;
  refusing.reason = "the database is unreachable";
  store_.set_write_health(refusing);
  advance(Millis(120'000));  // the store seen out from 11 s to 130 s
  EXPECT_EQ(view("nightly").state.status, MonitorStatus::kUp) << "no verdict while the store is out";

  store_.set_write_health({});
  advance(Millis(78'000));  // 208 s: the deadline moved by the 120 s outage, to 210 s
  EXPECT_EQ(view("nightly").state.status, MonitorStatus::kUp);
  advance(Millis(2'000));
  const MonitorView down = view("nightly");
  EXPECT_EQ(down.state.status, MonitorStatus::kDown);
  ASSERT_TRUE(down.open_incident.has_value());
  EXPECT_NE(down.open_incident->cause.find("its deadline moved 2m by store outages"), std::string::npos)
      << down.open_incident->cause;
}

TEST_F(EngineHeartbeatTest, PingsOnTheQuietPathShowWhatTheStateMachineGives) {
  MonitorConfig hb = heartbeat_monitor("nightly", Millis(60'000), Millis(60'000));
  hb.retries = 1;
  config_.monitors = {hb};
  start();

  // The same pings, as results, through the state machine alone.
  MonitorState expected = view("nightly").state;
  for (PingKind kind : {PingKind::kSuccess, PingKind::kSuccess, PingKind::kSuccess, PingKind::kFail,
                        PingKind::kSuccess, PingKind::kSuccess}) {
    advance(Millis(10'000));
    CheckResult result;
    result.at = clock_.system_time();
    result.ok = kind == PingKind::kSuccess;
    result.cause = result.ok ? "" : "fail ping";
    expected = next_state(expected, result, hb.retries).state;

    ASSERT_TRUE(ping(kind).ok());
    const MonitorView seen = view("nightly");
    EXPECT_EQ(seen.state.status, expected.status);
    EXPECT_EQ(seen.state.since, expected.since);
    EXPECT_EQ(seen.state.last_check, expected.last_check);
    EXPECT_EQ(seen.state.last_latency_ms, expected.last_latency_ms);
    EXPECT_EQ(seen.state.last_error, expected.last_error);
    EXPECT_EQ(seen.state.consecutive_failures, expected.consecutive_failures);
    ASSERT_TRUE(seen.last_result.has_value());
    EXPECT_EQ(seen.last_result->at, result.at);
    EXPECT_EQ(seen.last_result->ok, result.ok);
  }
  EXPECT_EQ(expected.status, MonitorStatus::kUp);
  EXPECT_EQ(engine_.metrics().by_monitor.at("nightly").success, 5u);
  EXPECT_EQ(engine_.metrics().by_monitor.at("nightly").failure, 1u);
}

TEST_F(EngineHeartbeatTest, AQuietSuccessIsShownBeforeTheIoThreadRuns) {
  config_.monitors = {heartbeat_monitor("nightly", Millis(60'000), Millis(60'000))};
  start();
  ASSERT_TRUE(ping(PingKind::kSuccess).ok());
  advance(Millis(5'000));
  Ping p;
  p.at = clock_.system_time();
  engine_.record_ping("nightly", p, {});
  // Nothing has run on the io thread: the ping went the quiet way.
  EXPECT_EQ(view("nightly").state.last_check, p.at);
  EXPECT_EQ(view("nightly").heartbeat->last_ping->ping.at, p.at);
  settle();
  EXPECT_EQ(view("nightly").state.last_check, p.at);
}

}  // namespace
}  // namespace trainwatch::engine
