#include "heartbeat/rules.h"

#include <algorithm>

#include "core/duration.h"
#include "core/redaction.h"
#include "cron/zone.h"

namespace trainwatch::heartbeat {
namespace {

std::optional<MonoTime> finish_deadline(const HeartbeatSpec& spec, const Track& t) {
  if (!t.due || t.last_finish_failed || t.finish_overdue_reported) return std::nullopt;
  return *t.due + spec.grace + t.finish_moved;
}

// Due one period, or the schedule's next fire time, after the anchor (a finish, or the
// moment watching began), on both time lines.
void set_due_after(const HeartbeatSpec& spec, Track& t, SystemTime anchor_system, MonoTime anchor_mono) {
  t.due.reset();
  t.due_at.reset();
  if (!spec.schedule) {
    t.due = anchor_mono + spec.period;
    t.due_at = anchor_system + spec.period;
    return;
  }
  const std::optional<SystemTime> fire = spec.schedule->next_after(anchor_system);
  if (!fire) return;  // the loader refuses schedules that never fire
  t.due_at = *fire;
  t.due = anchor_mono + std::chrono::duration_cast<MonoTime::duration>(*fire - anchor_system);
}

// "expected every 60m, grace 60m" or "expected at 2024-03-31 03:00 CEST, schedule
// '0 3 * * *' in Europe/Berlin, grace 30m".
std::string expectation(const HeartbeatSpec& spec, const Track& t) {
  if (!spec.schedule || !t.due_at) {
    return "expected every " + format_elapsed(spec.period) + ", grace " + format_elapsed(spec.grace);
  }
  const cron::Schedule& s = *spec.schedule;
  return "expected at " + cron::format_local(*t.due_at, s.zone) + ", schedule '" + s.text + "' in " +
         s.zone_name + ", grace " + format_elapsed(spec.grace);
}

std::optional<MonoTime> start_deadline(const HeartbeatSpec& spec, const Track& t) {
  if (!t.open_start || t.start_overdue_reported) return std::nullopt;
  return *t.open_start + spec.grace + t.start_moved;
}

Millis since(MonoTime then, MonoTime now) { return std::chrono::duration_cast<Millis>(now - then); }

// What a cause adds when outages moved its deadline, so that "no ping for 2m 34s" with a
// period of 60s reads as it happened.
std::string moved_by_outages(Millis moved) {
  if (moved.count() <= 0) return "";
  return "; its deadline moved " + format_elapsed(moved) + " by store outages, when pings were refused";
}

std::string failure_cause(const Ping& ping) {
  std::string cause =
      ping.kind == PingKind::kFail ? "fail ping" : "exit code " + std::to_string(ping.exit_code);
  // The body is the job's own output: marked, so that only admins and alerts read it.
  if (std::string line = first_line(ping.body); !line.empty()) cause += ": " + mark_body_value(line);
  return cause;
}

// Length of the valid UTF-8 character starting at s[i], or 0 when it is not one.
size_t utf8_char_length(const std::string& s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return 0;
  }
  return n;
}

}  // namespace

std::optional<MonoTime> next_deadline(const HeartbeatSpec& spec, const Track& track) {
  auto a = finish_deadline(spec, track);
  auto b = start_deadline(spec, track);
  if (a && b) return std::min(*a, *b);
  return a ? a : b;
}

std::optional<std::string> check_deadlines(const HeartbeatSpec& spec, Track& track, MonoTime now) {
  // A hung run is the more specific cause, so it is checked first.
  if (auto d = start_deadline(spec, track); d && now >= *d) {
    track.start_overdue_reported = true;
    return "started " + format_elapsed(since(*track.open_start, now)) + " ago, no finish" +
           moved_by_outages(track.start_moved);
  }
  if (auto d = finish_deadline(spec, track); d && now >= *d) {
    track.finish_overdue_reported = true;
    const std::string silence =
        track.last_finish ? "no ping for " + format_elapsed(since(*track.last_finish, now)) : "no ping yet";
    return silence + " (" + expectation(spec, track) + ")" + moved_by_outages(track.finish_moved);
  }
  return std::nullopt;
}

bool is_late(const HeartbeatSpec& spec, const Track& track, MonoTime now) {
  (void)spec;
  if (!track.due || track.last_finish_failed) return false;
  return now >= *track.due + track.finish_moved;
}

void reschedule(const HeartbeatSpec& spec, Track& track, SystemTime now_system, MonoTime now_mono) {
  track.due.reset();
  track.due_at.reset();
  if (track.last_finish && track.last_finish_at) {
    if (!track.last_finish_failed) set_due_after(spec, track, *track.last_finish_at, *track.last_finish);
  } else if (spec.schedule) {
    set_due_after(spec, track, now_system, now_mono);
  }
}

Millis outage_after(std::optional<MonoTime> counted_from, MonoTime from, MonoTime to) {
  const MonoTime begin = counted_from ? std::max(from, *counted_from) : from;
  return to > begin ? std::chrono::duration_cast<Millis>(to - begin) : Millis(0);
}

void move_deadlines(Track& track, MonoTime from, MonoTime to) {
  if (track.due) track.finish_moved += outage_after(track.last_finish, from, to);
  if (track.open_start) track.start_moved += outage_after(track.open_start, from, to);
}

PingEffect on_ping(const HeartbeatSpec& spec, Track& track, const Ping& ping, MonoTime now) {
  PingEffect effect;
  if (ping.kind == PingKind::kLog) return effect;
  if (ping.kind == PingKind::kStart) {
    track.open_start = now;
    track.start_overdue_reported = false;
    track.start_moved = Millis(0);
    return effect;
  }
  if (track.open_start) effect.run_time = since(*track.open_start, now);
  track.open_start.reset();
  track.start_overdue_reported = false;
  track.last_finish = now;
  track.last_finish_at = ping.at;
  track.last_finish_failed = is_failure(ping);
  track.finish_overdue_reported = false;
  track.finish_moved = Millis(0);
  track.start_moved = Millis(0);
  reschedule(spec, track, ping.at, now);

  CheckResult result;
  result.at = ping.at;
  result.ok = !track.last_finish_failed;
  result.latency_ms = effect.run_time ? static_cast<double>(effect.run_time->count()) : 0.0;
  if (!result.ok) result.cause = failure_cause(ping);
  effect.result = std::move(result);
  return effect;
}

Track restore_track(const HeartbeatSpec& spec, const HeartbeatMarks& marks, const MonitorState& state,
                    SystemTime now_system, MonoTime now_mono) {
  auto to_mono = [&](SystemTime t) { return now_mono - (now_system - t); };
  // The stored state already carries this deadline's failure when it is DOWN with a
  // result at or after the deadline.
  auto reported = [&](SystemTime deadline) {
    return state.status == MonitorStatus::kDown && state.last_check && *state.last_check >= deadline;
  };
  Track track;
  if (marks.last_finish) {
    const Ping& finish = marks.last_finish->ping;
    track.last_finish = to_mono(finish.at);
    track.last_finish_at = finish.at;
    track.last_finish_failed = is_failure(finish);
  }
  reschedule(spec, track, now_system, now_mono);
  if (track.due_at) track.finish_overdue_reported = reported(*track.due_at + spec.grace);
  if (marks.open_start) {
    track.open_start = to_mono(*marks.open_start);
    track.start_overdue_reported = reported(*marks.open_start + spec.grace);
  }
  return track;
}

std::string format_elapsed(Millis d) {
  using std::chrono::hours;
  using std::chrono::minutes;
  if (d < minutes(1) || d >= hours(2)) return format_duration(d);
  const auto m = std::chrono::duration_cast<minutes>(d);
  const auto s = std::chrono::duration_cast<std::chrono::seconds>(d - m);
  // Seconds only matter for short spans: "1m 30s", but "61m" rather than "61m 4s".
  if (s.count() == 0 || m >= minutes(10)) return std::to_string(m.count()) + "m";
  return std::to_string(m.count()) + "m " + std::to_string(s.count()) + "s";
}

std::string first_line(const std::string& body) {
  size_t end = body.find_first_of("\r\n");
  if (end == std::string::npos) end = body.size();
  std::string line;
  for (size_t i = 0; i < end;) {
    size_t n = utf8_char_length(body, i);
    if (n == 0) n = 1;  // bodies are cleaned at ingest; a stray byte is skipped here
    if (line.size() + n > kMaxCauseLineBytes) return line + "…";
    if (utf8_char_length(body, i) != 0) line.append(body, i, n);
    i += n;
  }
  // Trailing blanks would only pad the cause.
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.pop_back();
  return line;
}

}  // namespace trainwatch::heartbeat
