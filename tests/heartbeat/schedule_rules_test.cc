// The heartbeat rules with a cron schedule instead of a period: a ping is due at the
// schedule's next fire time after the last ping (or after watching began), late from
// then, overdue `grace` later. Wall times are the schedule's; deadlines the manual clock's.
#include <gtest/gtest.h>

#include "core/time_format.h"
#include "cron/zone.h"
#include "heartbeat/rules.h"

#include "fakes/manual_clock.h"

namespace trainwatch::heartbeat {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using testing::ManualClock;

SystemTime utc(const char* rfc3339) { return parse_rfc3339(rfc3339).value_or(SystemTime{}); }

HeartbeatSpec on_schedule(const char* text, const char* zone, Millis grace) {
  HeartbeatSpec s;
  cron::Schedule schedule;
  schedule.text = text;
  schedule.zone_name = zone;
  schedule.expression = *cron::parse_expression(text);
  schedule.zone = *cron::load_zone(zone);
  s.schedule = schedule;
  s.grace = grace;
  return s;
}

class ScheduleRulesTest : public ::testing::Test {
 protected:
  // Saturday 2024-03-30 12:00 UTC: the night after is Berlin's spring-forward night.
  ManualClock clock{utc("2024-03-30T12:00:00Z")};
  HeartbeatSpec nightly = on_schedule("0 3 * * *", "Europe/Berlin", minutes(30));
  Track track;

  PingEffect send(PingKind kind) {
    Ping p;
    p.kind = kind;
    p.at = clock.system_time();
    return on_ping(nightly, track, p, clock.monotonic_time());
  }
  // The monotonic instant of a wall time, as the manual clock keeps them in step.
  MonoTime mono(SystemTime t) const {
    return clock.monotonic_time() + std::chrono::duration_cast<MonoTime::duration>(t - clock.system_time());
  }
};

TEST_F(ScheduleRulesTest, DueAtTheNextFireTimeAfterTheLastPingThenOverdueAfterGrace) {
  send(PingKind::kSuccess);
  // 03:00 CEST on the 31st (the clocks jump from 02:00 CET to 03:00 CEST) is 01:00 UTC.
  EXPECT_EQ(track.due_at, utc("2024-03-31T01:00:00Z"));
  EXPECT_EQ(next_deadline(nightly, track), mono(utc("2024-03-31T01:30:00Z")));

  clock.advance(hours(13) - Millis(1));
  EXPECT_FALSE(is_late(nightly, track, clock.monotonic_time()));
  clock.advance(Millis(1));
  EXPECT_TRUE(is_late(nightly, track, clock.monotonic_time()));
  clock.advance(minutes(30) - Millis(1));
  EXPECT_FALSE(check_deadlines(nightly, track, clock.monotonic_time()));
  clock.advance(Millis(1));
  EXPECT_EQ(check_deadlines(nightly, track, clock.monotonic_time()),
            "no ping for 13h 30m (expected at 2024-03-31 03:00 CEST, schedule '0 3 * * *' in Europe/Berlin, "
            "grace 30m)");
  EXPECT_FALSE(next_deadline(nightly, track)) << "reported once";
}

TEST_F(ScheduleRulesTest, APingAfterTheFireTimeAwaitsTheNextOne) {
  send(PingKind::kSuccess);
  clock.advance(hours(13) + minutes(5));  // the job ran at 03:05 CEST
  send(PingKind::kSuccess);
  EXPECT_EQ(track.due_at, utc("2024-04-01T01:00:00Z"));
  EXPECT_FALSE(is_late(nightly, track, clock.monotonic_time()));
}

TEST_F(ScheduleRulesTest, ANewTrackAwaitsTheFirstFireTimeAfterWatchingBegan) {
  reschedule(nightly, track, clock.system_time(), clock.monotonic_time());
  EXPECT_EQ(track.due_at, utc("2024-03-31T01:00:00Z"));
  clock.advance(hours(13) + minutes(30));
  EXPECT_EQ(
      check_deadlines(nightly, track, clock.monotonic_time()),
      "no ping yet (expected at 2024-03-31 03:00 CEST, schedule '0 3 * * *' in Europe/Berlin, grace 30m)");
}

TEST_F(ScheduleRulesTest, APeriodTrackWithoutPingsAwaitsNothing) {
  HeartbeatSpec hourly;
  hourly.period = hours(1);
  hourly.grace = hours(1);
  reschedule(hourly, track, clock.system_time(), clock.monotonic_time());
  EXPECT_FALSE(next_deadline(hourly, track));
  EXPECT_FALSE(track.due_at);
}

TEST_F(ScheduleRulesTest, AFailedFinishAwaitsNothingAndAStartStillHasItsGrace) {
  send(PingKind::kFail);
  EXPECT_FALSE(track.due_at);
  EXPECT_FALSE(next_deadline(nightly, track));
  send(PingKind::kStart);
  EXPECT_EQ(next_deadline(nightly, track), clock.monotonic_time() + minutes(30));
}

TEST_F(ScheduleRulesTest, AChangedScheduleMovesTheDueTimeOfTheLastPing) {
  send(PingKind::kSuccess);
  HeartbeatSpec later = on_schedule("0 5 * * *", "Europe/Berlin", minutes(30));
  reschedule(later, track, clock.system_time(), clock.monotonic_time());
  EXPECT_EQ(track.due_at, utc("2024-03-31T03:00:00Z"));
}

TEST_F(ScheduleRulesTest, RestartCountsFromTheStoredPing) {
  HeartbeatMarks marks;
  marks.last_finish = PingRecord{};
  marks.last_finish->ping.kind = PingKind::kSuccess;
  marks.last_finish->ping.at = utc("2024-03-30T02:05:00Z");  // Saturday 03:05 CET
  MonitorState state;
  state.status = MonitorStatus::kUp;
  Track t = restore_track(nightly, marks, state, clock.system_time(), clock.monotonic_time());
  EXPECT_EQ(t.due_at, utc("2024-03-31T01:00:00Z"));
  EXPECT_EQ(next_deadline(nightly, t), mono(utc("2024-03-31T01:30:00Z")));

  // With no ping stored, the first fire time after the restart is due.
  Track fresh = restore_track(nightly, HeartbeatMarks{}, state, clock.system_time(), clock.monotonic_time());
  EXPECT_EQ(fresh.due_at, utc("2024-03-31T01:00:00Z"));
}

}  // namespace
}  // namespace trainwatch::heartbeat
