// The alerting part of the config: notification channels and maintenance windows.
//
// The loader reads a channel's common keys (name, type, default) and keeps every other
// key as a ChannelField with its position: each provider (src/alerting/providers/)
// validates its own fields and reports FILE:LINE:COL errors, so the config component
// does not need to know the providers. `${NAME}` is already expanded in field values.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/source_location.h"
#include "core/clock.h"

namespace trainwatch {

// One provider key's value: a string, a list of strings, or a mapping of strings.
struct ChannelField {
  enum class Kind { kScalar, kList, kMap };
  Kind kind = Kind::kScalar;
  std::string text;                                      // kScalar
  std::vector<std::string> list;                         // kList
  std::vector<std::pair<std::string, std::string>> map;  // kMap, in file order
  bool from_env = false;                                 // the value used ${NAME}: never echo it in a message
  SourceLocation where;
};

struct ChannelConfig {
  std::string name;                            // unique, [a-z0-9._-]+
  std::string type;                            // provider name: slack, email, webhook, ...
  bool is_default = false;                     // used by monitors that name no channel
  std::map<std::string, ChannelField> fields;  // every other key
  SourceLocation where;
  SourceLocation type_where;
};

// A time range in which notifications for some monitors are held (checks go on).
// Either absolute (start/end) or recurring (daily or weekly, in UTC).
struct MaintenanceWindow {
  std::vector<std::string> monitors;  // by name
  std::vector<std::string> tags;      // or by tag; a monitor matching either is covered
  // Absolute window: [start, end).
  std::optional<SystemTime> start;
  std::optional<SystemTime> end;
  // Recurring window: starts at `start_minute` minutes after midnight UTC (of `weekday`
  // for weekly: 0 = Sunday ... 6 = Saturday; -1 = every day) and lasts `length`.
  int weekday = -1;
  int start_minute = 0;
  Millis length{0};
  bool recurring = false;
  // A snooze: holds the alerts of its monitors and nothing else. Their checks, uptime,
  // state and status pages go on as if it were not there, where a maintenance window
  // shows them "maintenance" and counts the time as up.
  bool snooze = false;
  SourceLocation where;
};

}  // namespace trainwatch
