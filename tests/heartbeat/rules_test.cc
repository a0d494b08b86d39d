// Period, grace and start/finish rules on a manual clock: the clock moves, the test asks
// for the next deadline and fires it by hand, the way the engine's timer would.
#include "heartbeat/rules.h"

#include <gtest/gtest.h>

#include "core/redaction.h"

#include "fakes/manual_clock.h"

namespace trainwatch::heartbeat {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;
using testing::ManualClock;

HeartbeatSpec spec(Millis period, Millis grace) {
  HeartbeatSpec s;
  s.period = period;
  s.grace = grace;
  return s;
}

class RulesTest : public ::testing::Test {
 protected:
  Ping ping(PingKind kind, int exit_code = 0, std::string body = "") {
    Ping p;
    p.kind = kind;
    p.exit_code = exit_code;
    p.at = clock.system_time();
    p.body = std::move(body);
    return p;
  }
  PingEffect send(PingKind kind, int exit_code = 0, std::string body = "") {
    return on_ping(hourly, track, ping(kind, exit_code, std::move(body)), clock.monotonic_time());
  }
  // Moves the clock to the next deadline, as the engine's timer would, and fires it.
  std::optional<std::string> fire_next() {
    auto d = next_deadline(hourly, track);
    if (!d) return std::nullopt;
    if (*d > clock.monotonic_time())
      clock.advance(std::chrono::duration_cast<Millis>(*d - clock.monotonic_time()));
    return check_deadlines(hourly, track, clock.monotonic_time());
  }

  ManualClock clock;
  HeartbeatSpec hourly = spec(minutes(60), minutes(60));
  Track track;
};

TEST_F(RulesTest, ANewMonitorAwaitsNothing) {
  EXPECT_FALSE(next_deadline(hourly, track));
  clock.advance(hours(100));
  EXPECT_FALSE(check_deadlines(hourly, track, clock.monotonic_time()));
}

// The server refused pings for 30 minutes (its store was down): the deadline moves by the
// part of the outage after the last finish, and the cause says so; the next finish counts
// from itself again.
TEST_F(RulesTest, AStoreOutageMovesTheDeadlineByWhatCameAfterTheLastPing) {
  send(PingKind::kSuccess);
  const MonoTime finished = clock.monotonic_time();
  move_deadlines(track, finished - minutes(20), finished + minutes(30));  // began before the ping
  EXPECT_EQ(next_deadline(hourly, track), finished + minutes(150));
  clock.advance(minutes(149));
  EXPECT_FALSE(check_deadlines(hourly, track, clock.monotonic_time()));
  auto cause = fire_next();
  ASSERT_TRUE(cause);
  EXPECT_EQ(
      *cause,
      "no ping for 2h 30m (expected every 60m, grace 60m); its deadline moved 30m by store outages, when "
      "pings were refused");

  send(PingKind::kSuccess);
  EXPECT_EQ(next_deadline(hourly, track), clock.monotonic_time() + minutes(120)) << "a new finish, unmoved";
}

// A run started before the outage: its "no finish" deadline moves too; an outage that
// ended before the start moves nothing.
TEST_F(RulesTest, AStoreOutageMovesAnOpenRunsDeadlineFromItsStart) {
  send(PingKind::kSuccess);
  clock.advance(minutes(10));
  send(PingKind::kStart);
  const MonoTime started = clock.monotonic_time();
  move_deadlines(track, started - minutes(9), started - minutes(1));
  EXPECT_EQ(next_deadline(hourly, track), started + minutes(60)) << "the start's, unmoved";
  move_deadlines(track, started + minutes(5), started + minutes(20));
  EXPECT_EQ(next_deadline(hourly, track), started + minutes(75));
}

TEST_F(RulesTest, UpUntilPeriodLateUntilGraceThenOverdueWithTheIssuesCause) {
  auto effect = send(PingKind::kSuccess);
  ASSERT_TRUE(effect.result);
  EXPECT_TRUE(effect.result->ok);
  EXPECT_EQ(next_deadline(hourly, track), clock.monotonic_time() + hours(2));

  clock.advance(minutes(59));
  EXPECT_FALSE(is_late(hourly, track, clock.monotonic_time()));
  clock.advance(minutes(1));
  EXPECT_TRUE(is_late(hourly, track, clock.monotonic_time()));
  clock.advance(minutes(59));
  EXPECT_FALSE(check_deadlines(hourly, track, clock.monotonic_time())) << "one minute of grace left";
  clock.advance(minutes(2));  // 2h 1m after the ping: past the deadline, as after a slow timer
  EXPECT_EQ(check_deadlines(hourly, track, clock.monotonic_time()),
            "no ping for 2h 1m (expected every 60m, grace 60m)");
}

TEST_F(RulesTest, EachDeadlineIsReportedOnceUntilTheNextPing) {
  send(PingKind::kSuccess);
  EXPECT_TRUE(fire_next());
  EXPECT_FALSE(next_deadline(hourly, track));
  clock.advance(hours(10));
  EXPECT_FALSE(check_deadlines(hourly, track, clock.monotonic_time()));

  send(PingKind::kSuccess);
  EXPECT_EQ(next_deadline(hourly, track), clock.monotonic_time() + hours(2));
}

TEST_F(RulesTest, AStartWithoutAFinishWithinGraceIsOverdue) {
  send(PingKind::kSuccess);
  clock.advance(minutes(30));
  send(PingKind::kStart);
  // The start's deadline (30m + 60m) comes before the ping's (120m).
  EXPECT_EQ(next_deadline(hourly, track), clock.monotonic_time() + minutes(60));
  clock.advance(minutes(61));
  EXPECT_EQ(check_deadlines(hourly, track, clock.monotonic_time()), "started 61m ago, no finish");
  // The ping deadline is still awaited after the start's was reported.
  EXPECT_EQ(fire_next(), "no ping for 2h (expected every 60m, grace 60m)");
}

TEST_F(RulesTest, AFinishAfterAStartReportsTheRunTimeAndClearsTheStart) {
  send(PingKind::kStart);
  clock.advance(minutes(40));
  auto effect = send(PingKind::kExitCode, 0);
  ASSERT_TRUE(effect.run_time);
  EXPECT_EQ(*effect.run_time, minutes(40));
  ASSERT_TRUE(effect.result);
  EXPECT_TRUE(effect.result->ok) << "exit code 0 is a success";
  EXPECT_EQ(effect.result->latency_ms, 40 * 60 * 1000);
  EXPECT_FALSE(track.open_start);
  EXPECT_EQ(next_deadline(hourly, track), clock.monotonic_time() + hours(2));
}

TEST_F(RulesTest, AStartOnANewMonitorArmsOnlyTheStartDeadline) {
  send(PingKind::kStart);
  EXPECT_EQ(next_deadline(hourly, track), clock.monotonic_time() + minutes(60));
  EXPECT_EQ(fire_next(), "started 60m ago, no finish");
  EXPECT_FALSE(next_deadline(hourly, track));
}

TEST_F(RulesTest, FailAndNonZeroExitCodesFailAtOnceWithTheFirstLineOfTheBody) {
  auto fail = send(PingKind::kFail, 0, "disk full\nmore detail");
  ASSERT_TRUE(fail.result);
  EXPECT_FALSE(fail.result->ok);
  EXPECT_EQ(cause_for(fail.result->cause, Audience::kAdmin), "fail ping: disk full");
  EXPECT_EQ(cause_for(fail.result->cause, Audience::kPublic), "fail ping: (redacted)")
      << "the body is the job's output";
  EXPECT_FALSE(next_deadline(hourly, track)) << "already failed: nothing more to wait for";

  auto code = send(PingKind::kExitCode, 3, "");
  EXPECT_EQ(code.result->cause, "exit code 3");
  auto code_body = send(PingKind::kExitCode, 137, "\nkilled");
  EXPECT_EQ(code_body.result->cause, "exit code 137") << "an empty first line adds nothing";

  auto ok = send(PingKind::kSuccess);
  EXPECT_TRUE(ok.result->ok);
  EXPECT_TRUE(next_deadline(hourly, track));
}

TEST_F(RulesTest, LogPingsChangeNothing) {
  send(PingKind::kSuccess);
  const auto before = next_deadline(hourly, track);
  clock.advance(minutes(10));
  auto effect = send(PingKind::kLog, 0, "step 100");
  EXPECT_FALSE(effect.result);
  EXPECT_EQ(next_deadline(hourly, track), before);
}

TEST_F(RulesTest, ShortPeriodsAsInTheIntegrationTests) {
  HeartbeatSpec fast = spec(seconds(1), seconds(1));
  Track t;
  on_ping(fast, t, ping(PingKind::kSuccess), clock.monotonic_time());
  clock.advance(seconds(2));
  EXPECT_EQ(check_deadlines(fast, t, clock.monotonic_time()), "no ping for 2s (expected every 1s, grace 1s)");
}

// --- restart --------------------------------------------------------------------------

PingRecord stored(PingKind kind, SystemTime at, int exit_code = 0) {
  PingRecord r;
  r.ping.kind = kind;
  r.ping.at = at;
  r.ping.exit_code = exit_code;
  return r;
}

TEST_F(RulesTest, RestartRebuildsTheDeadlineFromTheStoredPing) {
  HeartbeatMarks marks;
  marks.last_finish = stored(PingKind::kSuccess, clock.system_time() - minutes(30));
  MonitorState state;
  state.status = MonitorStatus::kUp;
  Track t = restore_track(hourly, marks, state, clock.system_time(), clock.monotonic_time());
  EXPECT_EQ(next_deadline(hourly, t), clock.monotonic_time() + minutes(90));
}

TEST_F(RulesTest, ADeadlineThatPassedWhileTheServerWasDownIsDueAtOnce) {
  HeartbeatMarks marks;
  marks.last_finish = stored(PingKind::kSuccess, clock.system_time() - minutes(121));
  MonitorState state;
  state.status = MonitorStatus::kUp;
  state.last_check = clock.system_time() - minutes(121);
  Track t = restore_track(hourly, marks, state, clock.system_time(), clock.monotonic_time());
  ASSERT_TRUE(next_deadline(hourly, t));
  EXPECT_LE(*next_deadline(hourly, t), clock.monotonic_time());
  EXPECT_EQ(check_deadlines(hourly, t, clock.monotonic_time()),
            "no ping for 2h 1m (expected every 60m, grace 60m)");
}

TEST_F(RulesTest, ADeadlineAlreadyReportedBeforeTheRestartIsNotReportedAgain) {
  const SystemTime pinged = clock.system_time() - hours(5);
  HeartbeatMarks marks;
  marks.last_finish = stored(PingKind::kSuccess, pinged);
  MonitorState state;
  state.status = MonitorStatus::kDown;
  state.last_check = pinged + hours(2);  // the overdue result, stored before the restart
  Track t = restore_track(hourly, marks, state, clock.system_time(), clock.monotonic_time());
  EXPECT_FALSE(next_deadline(hourly, t));
}

TEST_F(RulesTest, RestartKeepsAnOpenStartAndAFailedFinish) {
  HeartbeatMarks marks;
  marks.last_finish = stored(PingKind::kExitCode, clock.system_time() - minutes(50), 2);
  marks.open_start = clock.system_time() - minutes(10);
  MonitorState state;
  state.status = MonitorStatus::kDown;
  state.last_check = clock.system_time() - minutes(50);
  Track t = restore_track(hourly, marks, state, clock.system_time(), clock.monotonic_time());
  EXPECT_TRUE(t.last_finish_failed);
  EXPECT_EQ(next_deadline(hourly, t), clock.monotonic_time() + minutes(50));
}

// --- causes ---------------------------------------------------------------------------

TEST(FormatElapsed, MinutesBelowTwoHoursTwoUnitsAbove) {
  EXPECT_EQ(format_elapsed(seconds(45)), "45s");
  EXPECT_EQ(format_elapsed(seconds(90)), "1m 30s");
  EXPECT_EQ(format_elapsed(minutes(60)), "60m");
  EXPECT_EQ(format_elapsed(minutes(61) + seconds(4)), "61m");
  EXPECT_EQ(format_elapsed(minutes(121)), "2h 1m");
  EXPECT_EQ(format_elapsed(hours(76)), "3d 4h");
}

TEST(FirstLine, IsBoundedAndCutAtACharacterBoundary) {
  EXPECT_EQ(first_line(""), "");
  EXPECT_EQ(first_line("one\r\ntwo"), "one");
  EXPECT_EQ(first_line("trailing  \n"), "trailing");
  std::string long_line;
  for (int i = 0; i < 150; ++i) long_line += "é";  // 2 bytes each
  std::string line = first_line(long_line);
  EXPECT_EQ(line.size(), kMaxCauseLineBytes + std::string("…").size());
  EXPECT_EQ(line.substr(line.size() - 3), "…");
}

}  // namespace
}  // namespace trainwatch::heartbeat
