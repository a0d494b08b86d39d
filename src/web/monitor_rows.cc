#include "web/monitor_rows.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <vector>

#include "config/monitor_target.h"
#include "views/json_views.h"
#include "views/monitor_uptime.h"
#include "views/shown_state.h"
#include "web/heartbeat_due.h"
#include "web/pages.h"
#include "web/recent_checks.h"
#include "web/time_text.h"
#include "web/uptime_days.h"

namespace trainwatch::web {
namespace {

namespace json = boost::json;
using views::ShownState;

using Buckets = std::map<std::string, std::vector<UptimeBucket>>;

int rank_of(ShownState s) {
  switch (s) {
    case ShownState::kDown: return 0;
    case ShownState::kPending: return 1;
    case ShownState::kMaintenance: return 2;
    case ShownState::kUp: return 3;
    case ShownState::kPaused: return 4;
  }
  return 5;
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// A list is a glance: its targets are their public form (no credentials, no query) for
// every reader; the monitor's page shows the rest to those who may see it.
std::string list_target(const engine::MonitorView& v) {
  return describe_target(*v.config, Audience::kPublic);
}

// What the search box matches: the name, the target as the list shows it, the tags.
std::string search_text(const engine::MonitorView& v) {
  std::string text = v.config->name + ' ' + list_target(v);
  for (const auto& tag : v.config->tags) text += ' ' + tag;
  return lower(std::move(text));
}

bool matches(const engine::MonitorView& v, const ListFilter& f) {
  const auto& tags = v.config->tags;
  return (f.state.empty() || views::shown_code(views::shown_state(v)) == f.state) &&
         (f.type.empty() || to_string(v.config->type) == f.type) &&
         (f.tag.empty() || std::find(tags.begin(), tags.end(), f.tag) != tags.end()) &&
         (f.query.empty() || search_text(v).find(lower(f.query)) != std::string::npos);
}

// The rollups of every listed checked monitor, in batches the store takes (heartbeats
// read theirs one by one: views/monitor_uptime.h).
Buckets batched_uptime(Store& store, const std::vector<engine::MonitorView>& views,
                       RollupResolution resolution, int64_t from_ms, int64_t to_ms) {
  Buckets out;
  std::vector<std::string> names;
  auto flush = [&] {
    if (names.empty()) return;
    if (auto read = store.uptime_of(names, UptimeQuery{"", resolution, from_ms, to_ms})) out.merge(*read);
    names.clear();
  };
  for (const auto& v : views) {
    if (v.config->type == MonitorType::kHeartbeat) continue;
    names.push_back(v.config->name);
    if (names.size() == Store::kMaxRowsPerBatch) flush();
  }
  flush();
  return out;
}

std::string uptime_text(const std::optional<std::vector<UptimeBucket>>& buckets) {
  auto pct = buckets ? uptime_percent(*buckets) : std::nullopt;
  return pct ? format_percent(*pct) : std::string("–");
}

struct RowReads {
  Buckets hourly, daily;
};

// One heartbeat's uptime over [now - width, now], as time not DOWN.
std::optional<std::vector<UptimeBucket>> heartbeat_uptime(const WebContext& ctx, const engine::MonitorView& v,
                                                          RollupResolution resolution, int64_t width,
                                                          SystemTime now) {
  const int64_t now_ms = to_unix_ms(now);
  auto read = views::uptime_buckets(ctx.store, v,
                                    UptimeQuery{v.config->name, resolution, now_ms - width, now_ms + 1}, now);
  return read ? std::optional(std::move(*read)) : std::nullopt;
}

void add_history(const WebContext& ctx, const engine::MonitorView& v, const RowReads& reads, SystemTime now,
                 json::object& row) {
  const std::string& name = v.config->name;
  std::vector<Beat> beats;
  if (v.config->type == MonitorType::kHeartbeat) {
    auto pings = ctx.store.pings(PingQuery{name, std::nullopt, static_cast<int>(kBeats)});
    auto results = ctx.store.results(ResultQuery{name, std::nullopt, static_cast<int>(kBeats)});
    if (pings && results) beats = beats_from_pings(*pings, *results, kBeats);
    row["uptime_24h"] = uptime_text(heartbeat_uptime(ctx, v, RollupResolution::kHour, kDayMs, now));
    row["uptime_30d"] = uptime_text(heartbeat_uptime(ctx, v, RollupResolution::kDay, 30 * kDayMs, now));
  } else {
    if (auto results = ctx.store.results(ResultQuery{name, std::nullopt, static_cast<int>(kBeats)}))
      beats = beats_from_results(*results, kBeats);
    auto find = [&name](const Buckets& b) {
      auto it = b.find(name);
      return it == b.end() ? std::optional(std::vector<UptimeBucket>()) : std::optional(it->second);
    };
    row["uptime_24h"] = uptime_text(find(reads.hourly));
    row["uptime_30d"] = uptime_text(find(reads.daily));
  }
  row["beats_html"] = beats_html(beats, kBeats);  // escaped where it is made
  Sparkline spark = sparkline(beats);
  row["spark_path"] = spark.path;
  row["spark_label"] = spark.label;
}

json::object row_json(const WebContext& ctx, const engine::MonitorView& v, Audience audience,
                      const RowReads& reads, SystemTime now) {
  json::object row;
  row["name"] = v.config->name;
  row["type"] = to_string(v.config->type);
  row["target"] = list_target(v);
  json::array tags;
  for (const auto& tag : v.config->tags) tags.emplace_back(tag);
  row["has_tags"] = !tags.empty();
  row["tags"] = std::move(tags);
  row["search"] = search_text(v);
  const ShownState shown = views::shown_state(v);
  row["status"] = views::shown_code(shown);
  row["status_word"] = views::shown_word(shown);
  row["status_icon"] = views::shown_icon(shown);
  row["since_t"] = time_json(v.state.since, now);
  if (v.maintenance_until) row["maintenance_until"] = time_json(*v.maintenance_until, now);
  if (auto due = heartbeat_due(v, now))
    row["due"] = json::object{{"text", due->text}, {"overdue", due->overdue}};
  if (v.state.last_check && v.config->type != MonitorType::kHeartbeat) {
    row["last_latency"] = latency_text(v.state.last_latency_ms);
  }
  if (!v.state.last_error.empty()) {
    std::string error = cause_for(v.state.last_error, audience);
    std::replace(error.begin(), error.end(), '\n', ' ');
    row["last_error"] = error;
  }
  add_history(ctx, v, reads, now, row);
  return row;
}

// Rows under one heading per tag (a monitor with two tags shows under both; one without
// under "No tag"), tags in name order; or one group without a heading.
json::array grouped(std::vector<std::pair<const engine::MonitorView*, json::object>>& rows, bool by_tag) {
  json::array groups;
  if (!by_tag) {
    json::array all;
    for (auto& [v, row] : rows) all.push_back(std::move(row));
    groups.push_back(json::object{{"rows", std::move(all)}});
    return groups;
  }
  std::map<std::string, json::array> by;
  for (auto& [v, row] : rows) {
    if (v->config->tags.empty()) by["\x7f"].push_back(row);
    for (const auto& tag : v->config->tags) by[tag].push_back(row);
  }
  for (auto& [tag, list] : by) {
    const size_t count = list.size();
    groups.push_back(json::object{{"heading", tag == "\x7f" ? std::string("No tag") : tag},
                                  {"count", count},
                                  {"rows", std::move(list)}});
  }
  return groups;
}

}  // namespace

std::string render_monitor_rows(const WebContext& ctx, Audience audience, const ListFilter& filter) {
  std::vector<engine::MonitorView> listed = ctx.engine.monitors();
  const size_t all = listed.size();
  json::object m;
  // How many are in each state, over every monitor: the line above the rows.
  std::map<std::string, size_t> counts;
  for (const auto& v : listed) ++counts[std::string(views::shown_code(views::shown_state(v)))];
  json::array summary;
  for (const char* s : {"down", "pending", "maintenance", "up", "paused"}) {
    if (counts[s] > 0) summary.push_back(json::object{{"state", s}, {"count", counts[s]}});
  }
  m["summary"] = std::move(summary);
  std::erase_if(listed, [&](const engine::MonitorView& v) { return !matches(v, filter); });
  std::stable_sort(listed.begin(), listed.end(),
                   [](const engine::MonitorView& a, const engine::MonitorView& b) {
                     return rank_of(views::shown_state(a)) < rank_of(views::shown_state(b));
                   });
  if (listed.size() > kMaxListRows) {
    m["more"] = json::object{{"shown", kMaxListRows}, {"total", listed.size()}};
    listed.resize(kMaxListRows);
  }
  const SystemTime now = ctx.clock.system_time();
  const int64_t now_ms = to_unix_ms(now);
  RowReads reads{batched_uptime(ctx.store, listed, RollupResolution::kHour, now_ms - kDayMs, now_ms + 1),
                 batched_uptime(ctx.store, listed, RollupResolution::kDay, now_ms - 30 * kDayMs, now_ms + 1)};
  std::vector<std::pair<const engine::MonitorView*, json::object>> rows;
  rows.reserve(listed.size());
  for (const auto& v : listed) rows.emplace_back(&v, row_json(ctx, v, audience, reads, now));
  m["shown"] = rows.size();
  m["none"] = rows.empty();
  m["all"] = all;
  m["selectable"] = audience != Audience::kPublic;
  m["groups"] = grouped(rows, filter.by_tag);
  return render_page("part_monitor_rows", m);
}

}  // namespace trainwatch::web
