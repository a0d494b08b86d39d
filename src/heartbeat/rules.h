// The heartbeat rules, as pure functions over a Track (what the monitor remembers of its
// pings) and a monotonic `now`. No timers, no I/O: the engine arms a timer at
// next_deadline() and calls check_deadlines() when it fires; tests do the same on a
// manual clock.
//
// Healthchecks' rule, with period P (or a cron schedule) and grace G:
//   last finish at T (success)   up until it is due (T+P, or the schedule's first fire
//                                time after T), late until due+G, then overdue:
//                                "no ping for 2h 1m (expected every 60m, grace 60m)"
//   start at S, no finish        overdue at S+G: "started 61m ago, no finish"
//   fail / exit code != 0        a failed result at once (DOWN), with the code and the
//                                body's first line: "exit code 3: CUDA error: out of memory"
//   no ping yet                  a period awaits nothing (the monitor stays pending); a
//                                schedule promises a time, so its first fire time after
//                                the monitor is watched (start, resume, reload) is due
//
// Worked example, P = 60m, G = 60m:
//   09:00 success       -> ok result; due 10:00, deadline 11:00
//   10:30 start         -> deadline min(11:00, 10:30+60m=11:30) = 11:00
//   11:00 (timer)       -> overdue "no ping for 2h (expected every 60m, grace 60m)";
//                          next deadline 11:30 (the start's)
//   11:10 exit code 0   -> ok result, run time 40m; due 12:10, deadline 13:10
//
// With schedule "0 3 * * *" in Europe/Berlin and G = 30m, a success at 03:02 on a Monday
// is due at 03:00 on Tuesday, late from then, overdue at 03:30. Due times are wall times
// (the schedule's, in its zone) placed on the monotonic line by their distance from the
// ping that set them, so a clock step after that ping does not move the deadline.
//
// Each deadline is reported once: after check_deadlines() reports it, next_deadline()
// moves past it until a new ping sets a new one.
//
// Pings the server itself refused (its store could not take them: the database down, a
// full disk, a locked table) were not missed by their sender: each deadline moves by the
// part of such an outage that came after the ping it counts from (move_deadlines), so a
// heartbeat pinged all through a 30 s outage is not DOWN after it; one that was silent
// is, as late as the outage lasted.
#pragma once

#include <optional>
#include <string>

#include "config/config.h"
#include "core/clock.h"
#include "core/model.h"
#include "core/ping.h"
#include "storage/heartbeat_marks.h"

namespace trainwatch::heartbeat {

struct Track {
  std::optional<MonoTime> last_finish;       // newest success, fail or exit code
  std::optional<SystemTime> last_finish_at;  // its wall time: schedules count from it
  bool last_finish_failed = false;           // a failed finish awaits nothing: it is DOWN already
  std::optional<MonoTime> open_start;        // a start not yet followed by a finish
  bool finish_overdue_reported = false;
  bool start_overdue_reported = false;
  // When the next finish is due, on the timers' line and on the wall clock (for readers
  // and causes). Set by on_ping, reschedule and restore_track; nullopt: none is awaited.
  std::optional<MonoTime> due;
  std::optional<SystemTime> due_at;
  // How far store outages moved the finish's and the start's deadlines (move_deadlines);
  // a new finish (or start) counts from itself again.
  Millis finish_moved{0};
  Millis start_moved{0};
};

// The store refused pings from `from` to `to`: each deadline counting from a ping before
// `to` moves by the part of [from, to] after that ping. Call once per outage.
void move_deadlines(Track& track, MonoTime from, MonoTime to);
// The part of the outage [from, to] after `counted_from` (nullopt: all of it): what a
// deadline counting from that ping moves by.
Millis outage_after(std::optional<MonoTime> counted_from, MonoTime from, MonoTime to);

// Sets when the next finish is due under `spec`: counted from the last successful
// finish, or, for a schedule that has none, from `now` (watching begins). Call on a new
// track and whenever the spec changed.
void reschedule(const HeartbeatSpec& spec, Track& track, SystemTime now_system, MonoTime now_mono);

// The earliest deadline not yet reported; nullopt when nothing is awaited.
std::optional<MonoTime> next_deadline(const HeartbeatSpec& spec, const Track& track);

// A failed result's cause when a deadline has passed at `now` (and marks it reported);
// nullopt when nothing is overdue.
std::optional<std::string> check_deadlines(const HeartbeatSpec& spec, Track& track, MonoTime now);

// Past the due time but within grace: shown, not a failure.
bool is_late(const HeartbeatSpec& spec, const Track& track, MonoTime now);

struct PingEffect {
  std::optional<CheckResult> result;  // for finishes: what goes through the state machine
  std::optional<Millis> run_time;     // for finishes after a start: finish - start
};

// Applies one ping received at `now` to the track.
PingEffect on_ping(const HeartbeatSpec& spec, Track& track, const Ping& ping, MonoTime now);

// Rebuilds a track after a restart from the stored marks and state: stored wall times are
// placed on the monotonic line by their age at start-up. A deadline the stored state
// already reported (DOWN, with its last result at or after the deadline) is not reported
// again; one that passed while the server was down is due at once.
Track restore_track(const HeartbeatSpec& spec, const HeartbeatMarks& marks, const MonitorState& state,
                    SystemTime now_system, MonoTime now_mono);

// Durations in causes: minutes below two hours so that periods read as people write them
// ("60m", "61m", "90s" as "1m 30s"), two units above ("2h 1m", "3d 4h").
std::string format_elapsed(Millis d);

// The body's first line for a cause, at most kMaxCauseLineBytes (cut at a character
// boundary, "…" appended when cut); "" for an empty body.
inline constexpr size_t kMaxCauseLineBytes = 200;
std::string first_line(const std::string& body);

}  // namespace trainwatch::heartbeat
