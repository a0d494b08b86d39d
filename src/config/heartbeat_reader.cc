#include "config/heartbeat_reader.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "core/duration.h"
#include "cron/expression.h"
#include "cron/zone.h"

namespace trainwatch::config_detail {
namespace {

// Tokens are path segments users paste into URLs: URL-safe characters only, long enough
// not to be guessed when chosen by hand (generated ones are 128-bit).
bool valid_token(const std::string& token) {
  auto allowed = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-' || c == '~';
  };
  return token.size() >= 8 && token.size() <= 128 && std::all_of(token.begin(), token.end(), allowed);
}

// A heartbeat's `schedule` and `tz`: a five-field cron expression that fires on some
// date, in a zone of the system's tz database.
constexpr Millis kDefaultScheduleGrace{3'600'000};

std::optional<cron::Schedule> read_schedule(Section& s) {
  cron::Schedule schedule;
  bool ok = true;
  if (auto text = s.string("schedule")) {
    schedule.text = *text;
    auto parsed = cron::parse_expression(*text);
    if (!parsed) {
      s.diag().error(s.raw("schedule").Mark(), s.key_path("schedule"),
                     "found '" + *text + "': " + parsed.error().message);
      ok = false;
    } else if (std::string why = cron::never_fires(*parsed); !why.empty()) {
      s.diag().error(s.raw("schedule").Mark(), s.key_path("schedule"),
                     "found '" + *text + "', which never fires (" + why +
                         "); expected a schedule with at least one date that exists");
      ok = false;
    } else {
      schedule.expression = *parsed;
    }
  } else {
    ok = false;  // s.string reported the wrong type
  }
  if (auto tz = s.string("tz")) {
    auto zone = cron::load_zone(*tz);
    if (!zone) {
      s.diag().error(
          s.raw("tz").Mark(), s.key_path("tz"),
          "found '" + *tz +
              "'; expected a time zone of the tz database, such as Europe/Berlin, America/New_York "
              "or UTC");
      ok = false;
    } else {
      schedule.zone_name = *tz;
      schedule.zone = *zone;
    }
  }
  if (!ok) return std::nullopt;
  return schedule;
}

}  // namespace

void read_heartbeat(Section& s, MonitorConfig& m) {
  HeartbeatSpec spec;
  // The checked monitors' timing keys mean nothing here; accepting them would let
  // `interval: 1h` silently stand for a period that is never applied.
  for (const char* key : {"interval", "timeout", "retries"}) {
    if (s.has(key)) {
      s.diag().error(s.raw(key).Mark(), s.key_path(key),
                     "is not used by heartbeat monitors; expected period or schedule, and grace");
    }
  }
  constexpr Millis kMinPeriod{1000};
  s.raw("schedule");  // known even when empty: the checks below say what it lacks
  const bool has_period = s.has("period");
  const bool has_schedule = s.has("schedule");
  if (has_period && has_schedule) {
    s.diag().error(s.raw("schedule").Mark(), s.key_path("schedule"),
                   "found both schedule and period; expected exactly one of them");
  } else if (!has_period && !has_schedule) {
    s.diag().error(s.mark(), s.key_path("period"),
                   "missing; expected the time between pings, such as 60m, or a cron schedule, such as "
                   "\"0 3 * * *\"");
  }
  if (auto period = s.duration("period")) {
    if (*period < kMinPeriod) {
      s.diag().error(s.raw("period").Mark(), s.key_path("period"),
                     "found " + format_duration_config(*period) + "; expected at least 1s");
    }
    spec.period = *period;
  }
  if (has_schedule) spec.schedule = read_schedule(s);
  if (s.has("tz") && !has_schedule) {
    s.diag().error(s.raw("tz").Mark(), s.key_path("tz"),
                   "is used only with schedule; expected a cron schedule beside it, or no tz");
  }
  // Without a grace a period monitor is DOWN after two missed periods, the seeds' rule
  // ("alert when no ping arrives within twice the checkpoint interval"). A schedule has
  // no period to double: an hour, as in Healthchecks.
  spec.grace = spec.schedule ? kDefaultScheduleGrace : spec.period;
  if (auto grace = s.duration("grace")) {
    if (*grace < kMinPeriod) {
      s.diag().error(s.raw("grace").Mark(), s.key_path("grace"),
                     "found " + format_duration_config(*grace) + "; expected at least 1s");
    }
    spec.grace = *grace;
  }
  if (auto token = s.string("token")) {
    if (!valid_token(*token)) {
      s.diag().error(s.raw("token").Mark(), s.key_path("token"),
                     "found '" + *token + "'; expected 8 to 128 of the characters A-Z a-z 0-9 . _ - ~");
    }
    spec.token = *token;
  }
  constexpr int64_t kMaxPingBodyLimit = 1024 * 1024;  // the HTTP server's body bound
  if (auto limit = s.integer("ping_body_limit", 0, kMaxPingBodyLimit))
    spec.ping_body_limit = static_cast<size_t>(*limit);
  m.spec = std::move(spec);
}

}  // namespace trainwatch::config_detail
