// Reads the alerting keys: notification channels (each provider's fields are only
// collected here; alerting/providers validates them), maintenance windows, each monitor's
// notify keys, and the names these refer to. See notifications_reader.h.
#include "config/notifications_reader.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <set>

#include "core/names.h"
#include "core/time_format.h"

namespace trainwatch::config_detail {
namespace {

// A provider field: scalar, list of scalars or mapping of scalars, `${NAME}` expanded.
std::optional<ChannelField> read_field(Diagnostics& diag, const YAML::Node& value, const std::string& key) {
  ChannelField field;
  field.where = diag.location(value.Mark());
  auto expand = [&](const YAML::Node& scalar, const std::string& path) {
    if (scalar.Scalar().find("${") != std::string::npos) field.from_env = true;
    return diag.expand(scalar, path);
  };
  if (value.IsScalar()) {
    field.text = expand(value, key);
    return field;
  }
  if (value.IsSequence()) {
    field.kind = ChannelField::Kind::kList;
    for (size_t i = 0; i < value.size(); ++i) {
      std::string path = key + "[" + std::to_string(i) + "]";
      if (!value[i].IsScalar()) {
        diag.error(value[i].Mark(), path, describe(value[i]) + "; expected a string");
        return std::nullopt;
      }
      field.list.push_back(expand(value[i], path));
    }
    return field;
  }
  if (value.IsMap()) {
    field.kind = ChannelField::Kind::kMap;
    for (auto it = value.begin(); it != value.end(); ++it) {
      std::string path = key + "." + it->first.Scalar();
      if (!it->second.IsScalar()) {
        diag.error(it->second.Mark(), path, describe(it->second) + "; expected a string");
        return std::nullopt;
      }
      field.map.emplace_back(it->first.Scalar(), expand(it->second, path));
    }
    return field;
  }
  return std::nullopt;  // null: as if absent
}

std::optional<ChannelConfig> read_channel(Diagnostics& diag, const YAML::Node& node, size_t index) {
  const std::string path = "notifications[" + std::to_string(index) + "]";
  if (!node.IsMap()) {
    diag.error(node.Mark(), path, describe(node) + "; expected a mapping with name and type");
    return std::nullopt;
  }
  ChannelConfig c;
  c.where = diag.location(node.Mark());
  Section s(diag, node, path);
  if (auto name = s.string("name", true)) {
    if (std::string problem = name_problem(*name); !problem.empty()) {
      diag.error(s.raw("name").Mark(), s.key_path("name"), "found '" + *name + "'; " + problem);
    }
    c.name = *name;
  }
  if (auto type = s.string("type", true)) {
    c.type = *type;
    c.type_where = diag.location(s.raw("type").Mark());
  }
  if (auto is_default = s.boolean("default")) c.is_default = *is_default;
  // Every other key belongs to the provider, which validates it (alerting/providers).
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string key = it->first.Scalar();
    if (key == "name" || key == "type" || key == "default") continue;
    if (auto field = read_field(diag, it->second, s.key_path(key.c_str()))) c.fields[key] = std::move(*field);
  }
  return c;
}

// "HH:MM-HH:MM" -> start minute and length; nullopt when malformed or empty.
std::optional<std::pair<int, Millis>> parse_time_range(std::string_view text) {
  auto minute_of = [](std::string_view t) -> std::optional<int> {
    if (t.size() != 5 || t[2] != ':') return std::nullopt;
    int h = 0, m = 0;
    if (std::from_chars(t.data(), t.data() + 2, h).ec != std::errc() ||
        std::from_chars(t.data() + 3, t.data() + 5, m).ec != std::errc() || h > 23 || m > 59) {
      return std::nullopt;
    }
    return h * 60 + m;
  };
  const size_t dash = text.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  auto start = minute_of(text.substr(0, dash));
  auto end = minute_of(text.substr(dash + 1));
  if (!start || !end || *start == *end) return std::nullopt;
  // An end before the start wraps past midnight: "23:00-01:00" lasts two hours.
  const int length = (*end - *start + 24 * 60) % (24 * 60);
  return std::make_pair(*start, Millis(int64_t{length} * 60'000));
}

constexpr std::array<const char*, 7> kWeekdays = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};

// A one-off window: `start` and `end`, RFC 3339 times, the end after the start.
void read_dated_window(Section& s, const std::optional<std::string>& start,
                       const std::optional<std::string>& end, MaintenanceWindow& w) {
  auto read_time = [&](const std::optional<std::string>& text, const char* key) -> std::optional<SystemTime> {
    if (!text) {
      s.diag().error(s.mark(), s.key_path(key),
                     "missing; expected an RFC 3339 time such as 2026-05-01T02:00:00Z");
      return std::nullopt;
    }
    auto t = parse_rfc3339(*text);
    if (!t) {
      s.diag().error(s.raw(key).Mark(), s.key_path(key),
                     "found '" + *text + "'; expected an RFC 3339 time such as 2026-05-01T02:00:00Z");
    }
    return t;
  };
  w.start = read_time(start, "start");
  w.end = read_time(end, "end");
  if (w.start && w.end && *w.end <= *w.start) {
    s.diag().error(s.raw("end").Mark(), s.key_path("end"),
                   "found an end not after the start; expected a later time");
  }
}

// A recurring window: `daily: "HH:MM-HH:MM"` or `weekly: "DAY HH:MM-HH:MM"`, in UTC.
// False when the weekly day cannot be read: the range after it is not judged then.
bool read_recurring_window(Section& s, const std::optional<std::string>& daily,
                           const std::optional<std::string>& weekly, MaintenanceWindow& w) {
  std::string text = daily ? *daily : *weekly;
  const char* key = daily ? "daily" : "weekly";
  std::string_view range = text;
  if (weekly) {
    const size_t space = text.find(' ');
    const std::string day = text.substr(0, space);
    auto it = std::find_if(kWeekdays.begin(), kWeekdays.end(), [&](const char* d) { return day == d; });
    if (space == std::string::npos || it == kWeekdays.end()) {
      s.diag().error(
          s.raw(key).Mark(), s.key_path(key),
          "found '" + text + "'; expected a day (sun, mon, tue, wed, thu, fri, sat) and HH:MM-HH:MM in UTC");
      return false;
    }
    w.weekday = static_cast<int>(it - kWeekdays.begin());
    range = std::string_view(text).substr(space + 1);
  }
  auto parsed = parse_time_range(range);
  if (!parsed) {
    s.diag().error(s.raw(key).Mark(), s.key_path(key),
                   "found '" + text + "'; expected HH:MM-HH:MM in UTC such as 02:00-03:30");
  } else {
    w.recurring = true;
    w.start_minute = parsed->first;
    w.length = parsed->second;
  }
  return true;
}

std::optional<MaintenanceWindow> read_window(Diagnostics& diag, const YAML::Node& node, size_t index) {
  Section s(diag, node, "maintenance[" + std::to_string(index) + "]");
  if (!s.valid()) return std::nullopt;
  MaintenanceWindow w;
  w.where = diag.location(node.Mark());
  if (auto monitors = s.string_list("monitors")) w.monitors = *monitors;
  if (auto tags = s.string_list("tags")) w.tags = *tags;
  if (auto snooze = s.boolean("snooze")) w.snooze = *snooze;
  if (w.monitors.empty() && w.tags.empty()) {
    diag.error(s.mark(), s.key_path("monitors"), "missing; expected `monitors: [names]` or `tags: [tags]`");
  }
  auto start = s.string("start");
  auto end = s.string("end");
  auto daily = s.string("daily");
  auto weekly = s.string("weekly");
  const int forms = (start || end ? 1 : 0) + (daily ? 1 : 0) + (weekly ? 1 : 0);
  if (forms != 1) {
    diag.error(s.mark(), s.key_path("start"),
               "expected exactly one of: start and end (RFC 3339 times), daily: \"HH:MM-HH:MM\", "
               "weekly: \"sun HH:MM-HH:MM\" (UTC)");
    s.finish();
    return std::nullopt;
  }
  if (start || end) {
    read_dated_window(s, start, end, w);
  } else if (!read_recurring_window(s, daily, weekly, w)) {
    s.finish();
    return std::nullopt;
  }
  s.finish();
  return w;
}

}  // namespace

void read_notifications(Diagnostics& diag, const YAML::Node& node, std::vector<ChannelConfig>& out) {
  if (!node.IsDefined() || node.IsNull()) return;
  if (!node.IsSequence()) {
    diag.error(node.Mark(), "notifications", describe(node) + "; expected a list of channels");
    return;
  }
  std::map<std::string, int> seen;
  for (size_t i = 0; i < node.size(); ++i) {
    auto channel = read_channel(diag, node[i], i);
    if (!channel) continue;
    auto [it, inserted] = seen.emplace(channel->name, channel->where.line);
    if (!inserted && !channel->name.empty()) {
      diag.error(node[i]["name"].Mark(), "notifications[" + std::to_string(i) + "].name",
                 "found '" + channel->name + "' again; expected a unique name (first used at line " +
                     std::to_string(it->second) + ")");
    }
    out.push_back(std::move(*channel));
  }
}

void read_maintenance(Diagnostics& diag, const YAML::Node& node, std::vector<MaintenanceWindow>& out) {
  if (!node.IsDefined() || node.IsNull()) return;
  if (!node.IsSequence()) {
    diag.error(node.Mark(), "maintenance", describe(node) + "; expected a list of windows");
    return;
  }
  for (size_t i = 0; i < node.size(); ++i) {
    if (auto window = read_window(diag, node[i], i)) out.push_back(std::move(*window));
  }
}

void read_monitor_alerting(Section& s, MonitorConfig& m) {
  if (auto notify = s.string_list("notify")) m.notify = *notify;
  if (auto after = s.duration("notify_after")) m.notify_after = *after;
  if (auto every = s.duration("remind_every")) {
    if (every->count() < 60'000) {
      s.diag().error(s.raw("remind_every").Mark(), s.key_path("remind_every"),
                     "found a period under 1m; expected at least 1m (reminders are for people)");
    }
    m.remind_every = *every;
  }
}

void check_alerting_references(Diagnostics& diag, const YAML::Node& root, const Config& config) {
  if (!root.IsMap()) return;  // an empty file: nothing refers to anything
  std::set<std::string> channels;
  std::string known;
  for (const auto& c : config.notifications) {
    channels.insert(c.name);
    known += (known.empty() ? "" : ", ") + c.name;
  }
  // (A const lookup of a missing key gives a node whose Type() throws: IsDefined() first.)
  // Positions come from the YAML list by index: only when every entry was read (an
  // entry left out after an error would shift them; that error is reported already).
  const YAML::Node monitors = root["monitors"];
  const bool monitors_aligned =
      monitors.IsDefined() && monitors.IsSequence() && monitors.size() == config.monitors.size();
  for (size_t i = 0; i < config.monitors.size() && monitors_aligned; ++i) {
    const YAML::Node notify = monitors[i]["notify"];
    const auto& names = config.monitors[i].notify;
    for (size_t j = 0; j < names.size(); ++j) {
      if (channels.count(names[j]) != 0) continue;
      diag.error(notify.IsDefined() && notify.IsSequence() && j < notify.size() ? notify[j].Mark()
                                                                                : monitors[i].Mark(),
                 "monitors[" + std::to_string(i) + "].notify[" + std::to_string(j) + "]",
                 "found '" + names[j] + "'; expected a channel from notifications (" +
                     (known.empty() ? std::string("none defined") : known) + ")");
    }
  }
  std::set<std::string> monitor_names;
  for (const auto& m : config.monitors) monitor_names.insert(m.name);
  const YAML::Node windows = root["maintenance"];
  const bool windows_aligned =
      windows.IsDefined() && windows.IsSequence() && windows.size() == config.maintenance.size();
  for (size_t i = 0; i < config.maintenance.size() && windows_aligned; ++i) {
    const YAML::Node listed = windows[i]["monitors"];
    const auto& names = config.maintenance[i].monitors;
    for (size_t j = 0; j < names.size(); ++j) {
      if (monitor_names.count(names[j]) != 0) continue;
      diag.error(listed.IsDefined() && listed.IsSequence() && j < listed.size() ? listed[j].Mark()
                                                                                : windows[i].Mark(),
                 "maintenance[" + std::to_string(i) + "].monitors[" + std::to_string(j) + "]",
                 "found '" + names[j] + "'; expected the name of a monitor");
    }
  }
}

}  // namespace trainwatch::config_detail
