// Cron heartbeats in simulated time: due at the schedule's fire time (here across Berlin's
// spring-forward night), late from then, DOWN once grace has passed, up again on a ping.
#include <gtest/gtest.h>

#include "core/time_format.h"
#include "cron/zone.h"
#include "engine_harness.h"

namespace trainwatch::engine {
namespace {

using std::chrono::minutes;

SystemTime utc(const char* rfc3339) { return parse_rfc3339(rfc3339).value_or(SystemTime{}); }

class EngineCronTest : public testing::EngineHarness {
 protected:
  EngineCronTest() {
    // Saturday noon; that night Berlin's clocks jump from 02:00 CET to 03:00 CEST, so
    // "30 2 * * *" is due at 03:00 CEST (01:00 UTC) on Sunday.
    clock_.advance(std::chrono::duration_cast<Millis>(utc("2024-03-30T12:00:00Z") - clock_.system_time()));
    MonitorConfig m;
    m.name = "nightly";
    m.type = MonitorType::kHeartbeat;
    HeartbeatSpec spec;
    cron::Schedule schedule;
    schedule.text = "30 2 * * *";
    schedule.zone_name = "Europe/Berlin";
    schedule.expression = *cron::parse_expression(schedule.text);
    schedule.zone = *cron::load_zone(schedule.zone_name);
    spec.schedule = schedule;
    spec.grace = minutes(30);
    m.spec = spec;
    config_.monitors = {m};
  }

  Status ping() {
    Ping p;
    p.at = clock_.system_time();
    std::optional<Status> answer;
    engine_.record_ping("nightly", p, [&](const Status& s) { answer = s; });
    settle();
    return answer.value_or(make_error("test.unanswered", "no answer"));
  }

  // Moves simulated time to a wall-clock instant.
  void advance_to(SystemTime t) { advance(std::chrono::duration_cast<Millis>(t - clock_.system_time())); }
};

TEST_F(EngineCronTest, LateAtTheFireTimeAndDownWhenGraceHasPassed) {
  start();
  ASSERT_TRUE(ping().ok());
  EXPECT_EQ(view("nightly").state.status, MonitorStatus::kUp);
  EXPECT_EQ(view("nightly").heartbeat->next_expected, utc("2024-03-31T01:00:00Z"));

  advance_to(utc("2024-03-31T01:00:00Z") - Millis(1));
  EXPECT_FALSE(view("nightly").heartbeat->late);
  advance(Millis(1));
  EXPECT_TRUE(view("nightly").heartbeat->late);
  EXPECT_EQ(view("nightly").state.status, MonitorStatus::kUp) << "late is shown, not a failure";

  advance_to(utc("2024-03-31T01:30:00Z") - Millis(1));
  EXPECT_EQ(view("nightly").state.status, MonitorStatus::kUp);
  advance(Millis(1));
  const MonitorView down = view("nightly");
  EXPECT_EQ(down.state.status, MonitorStatus::kDown);
  ASSERT_TRUE(down.open_incident.has_value());
  EXPECT_EQ(down.open_incident->started, utc("2024-03-31T01:30:00Z"));
  EXPECT_EQ(down.open_incident->cause,
            "no ping for 13h 30m (expected at 2024-03-31 03:00 CEST, schedule '30 2 * * *' in Europe/Berlin, "
            "grace 30m)");

  advance_to(utc("2024-03-31T01:40:00Z"));
  ASSERT_TRUE(ping().ok());
  const MonitorView up = view("nightly");
  EXPECT_EQ(up.state.status, MonitorStatus::kUp);
  EXPECT_FALSE(up.open_incident.has_value());
  EXPECT_EQ(up.heartbeat->next_expected, utc("2024-04-01T00:30:00Z")) << "02:30 CEST on Monday";
}

TEST_F(EngineCronTest, WithoutAnyPingTheFirstFireTimeAfterStartIsDue) {
  start();
  EXPECT_EQ(view("nightly").state.status, MonitorStatus::kPending);
  EXPECT_EQ(view("nightly").heartbeat->next_expected, utc("2024-03-31T01:00:00Z"));

  advance_to(utc("2024-03-31T01:30:00Z") - Millis(1));
  EXPECT_EQ(view("nightly").state.status, MonitorStatus::kPending);
  advance(Millis(1));
  const MonitorView down = view("nightly");
  EXPECT_EQ(down.state.status, MonitorStatus::kDown);
  EXPECT_EQ(
      down.state.last_error,
      "no ping yet (expected at 2024-03-31 03:00 CEST, schedule '30 2 * * *' in Europe/Berlin, grace 30m)");
  // Reported once: a day of silence later it is still the one incident.
  advance(std::chrono::hours(24));
  EXPECT_EQ(view("nightly").open_incident->id, down.open_incident->id);
}

TEST_F(EngineCronTest, QuietPingsMoveTheNextExpectedTime) {
  start();
  ASSERT_TRUE(ping().ok());
  advance_to(utc("2024-03-31T01:05:00Z"));
  ASSERT_TRUE(ping().ok());  // up, awaiting a finish: the quiet path
  EXPECT_EQ(view("nightly").heartbeat->next_expected, utc("2024-04-01T00:30:00Z"));
  EXPECT_FALSE(view("nightly").heartbeat->late);
  advance_to(utc("2024-04-01T01:00:00Z") - Millis(1));
  EXPECT_EQ(view("nightly").state.status, MonitorStatus::kUp);
  advance(Millis(1));
  EXPECT_EQ(view("nightly").state.status, MonitorStatus::kDown);
}

}  // namespace
}  // namespace trainwatch::engine
