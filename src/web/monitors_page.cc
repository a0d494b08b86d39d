#include "web/monitors_page.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cron/zone.h"
#include "http/fresh_cache.h"
#include "views/audience.h"
#include "views/json_views.h"
#include "web/banner.h"
#include "web/dashboard_common.h"
#include "web/pages.h"

namespace trainwatch::web {
namespace {

namespace json = boost::json;
using http::Request;
using http::Responder;

// The monitors page lists at most this many rows (down ones first) and says how many
// more match; filters narrow it. Each row costs one read of at most 24 hourly rows.
constexpr size_t kMaxListRows = 100;
// The monitors table of one filter shows every change of state the engine had applied
// when it was asked for (fresh_cache.h); its latencies, check times and sparklines are at
// most this much older than the request.
constexpr Millis kMonitorRowsMaxAge{1'000};
constexpr int64_t kHourMs = 3'600'000;

using MonitorRowsCache = http::FreshCache<std::string>;

// A 24 h latency sparkline from a monitor's hourly buckets (24 at most).
std::pair<std::string, std::string> sparkline(const std::vector<UptimeBucket>& buckets, int64_t now_ms) {
  if (buckets.empty()) return {"", "no latency data in the last 24 hours"};
  double max = 0;
  for (const auto& b : buckets)
    max = std::max(max, b.latency_sum_ms / static_cast<double>(std::max<int64_t>(b.checks, 1)));
  std::string path;
  const int64_t from = now_ms - 24 * kHourMs;
  for (const auto& b : buckets) {
    const double mean = b.latency_sum_ms / static_cast<double>(std::max<int64_t>(b.checks, 1));
    const double x = 120.0 * static_cast<double>(b.start_ms - from) / static_cast<double>(24 * kHourMs);
    const double y = 22.0 - (max > 0 ? 20.0 * mean / max : 0);
    path += (path.empty() ? "M" : " L") + std::to_string(static_cast<int>(x)) + " " +
            std::to_string(static_cast<int>(y));
  }
  char label[96];
  std::snprintf(label, sizeof label, "mean latency per hour over 24 hours, highest %.0f ms", max);
  return {path, label};
}

int status_rank(MonitorStatus s) {
  switch (s) {
    case MonitorStatus::kDown: return 0;
    case MonitorStatus::kPending: return 1;
    case MonitorStatus::kUp: return 2;
    case MonitorStatus::kPaused: return 3;
  }
  return 4;
}

// The monitors table for one filter, rendered (part_monitor_rows): the filtered,
// sorted views, their sparklines (one store read) and the "showing N of M" line.
std::string render_monitor_rows(const WebContext& ctx, Audience audience, const std::string& state,
                                const std::string& type, const std::string& tag) {
  std::vector<engine::MonitorView> views = ctx.engine.monitors();
  std::erase_if(views, [&](const engine::MonitorView& v) {
    const auto& tags = v.config->tags;
    return (!state.empty() && to_string(v.state.status) != state) ||
           (!type.empty() && to_string(v.config->type) != type) ||
           (!tag.empty() && std::find(tags.begin(), tags.end(), tag) == tags.end());
  });
  // What is down comes first; then by name.
  std::stable_sort(views.begin(), views.end(),
                   [](const engine::MonitorView& a, const engine::MonitorView& b) {
                     return status_rank(a.state.status) < status_rank(b.state.status);
                   });
  const int64_t now = to_unix_ms(ctx.clock.system_time());
  json::object m;
  if (views.size() > kMaxListRows) {
    m["more"] = json::object{{"shown", kMaxListRows}, {"total", views.size()}};
    views.resize(kMaxListRows);
  }
  std::vector<std::string> names;
  names.reserve(views.size());
  for (const engine::MonitorView& v : views) names.push_back(v.config->name);
  // One read for every shown row's sparkline (kMaxListRows is below the store's batch bound).
  auto hourly =
      ctx.store.uptime_of(names, UptimeQuery{"", RollupResolution::kHour, now - 24 * kHourMs, now + 1});
  const std::vector<UptimeBucket> none;
  json::array rows;
  for (const engine::MonitorView& v : views) {
    json::object row = views::monitor_summary(v, audience);
    row["status_word"] = status_word(v.state.status);
    row["status_icon"] = status_icon(v.state.status);
    const std::vector<UptimeBucket>* buckets = &none;
    if (hourly) {
      if (auto it = hourly->find(v.config->name); it != hourly->end()) buckets = &it->second;
    }
    if (v.heartbeat && v.heartbeat->next_expected) {
      const auto& spec = std::get<HeartbeatSpec>(v.config->spec);
      row["next_expected_text"] = cron::format_local(
          *v.heartbeat->next_expected, spec.schedule ? spec.schedule->zone : cctz::utc_time_zone());
    }
    auto [path, label] = sparkline(*buckets, now);
    row["spark_path"] = path;
    row["spark_label"] = label;
    rows.push_back(std::move(row));
  }
  m["monitors"] = std::move(rows);
  return render_page("part_monitor_rows", m);
}

void monitors_page(const WebContext& ctx, MonitorRowsCache& cache, const Request& request,
                   const Responder& respond) {
  auto q = [&](const char* key) {
    auto it = request.query.find(key);
    return it == request.query.end() ? std::string() : it->second;
  };
  const std::string state = q("state"), type = q("type"), tag = q("tag");
  // The table is the same for every visitor of one audience with this filter; the page
  // around it carries the visitor's session (the forms' CSRF token).
  const Audience audience = views::audience_of(&ctx.auth, request);
  const std::string key = state + '\n' + type + '\n' + tag;
  auto build = [ctx, state, type, tag](Audience built_for) -> Result<std::string> {
    return render_monitor_rows(ctx, built_for, state, type, tag);
  };
  json::object m = layout_model(ctx, request, "Monitors · trainwatch");
  json::array states, types;
  for (const char* s : {"down", "pending", "up", "paused"})
    states.push_back(json::object{{"value", s}, {"selected", state == s}});
  for (const char* t : {"http", "tcp", "tls", "dns", "icmp", "heartbeat", "job"})
    types.push_back(json::object{{"value", t}, {"selected", type == t}});
  m["state_options"] = std::move(states);
  m["type_options"] = std::move(types);
  m["tag"] = tag;
  cache.get(audience, key, build, [respond, m = std::move(m)](Result<MonitorRowsCache::Value> rows) mutable {
    if (!rows) {
      http::Response r =
          http::Response::problem(503, "the monitors table cannot be read: " + rows.error().message);
      r.headers.emplace_back("Retry-After", "1");
      return respond(std::move(r));
    }
    m["rows_html"] = **rows;  // rendered by the template engine, every text escaped
    respond(html(200, render_page("monitors", m)));
  });
}

}  // namespace

void add_monitors_page(http::Router& router, const WebContext& ctx) {
  const std::vector<std::string> get = {"GET", "HEAD"};
  const engine::Engine& engine = ctx.engine;
  auto rows_cache = std::make_shared<MonitorRowsCache>(ctx.clock, kMonitorRowsMaxAge,
                                                       [&engine] { return engine.state_generation(); });
  router.add(get, "/", [ctx, rows_cache](const Request& r, const Responder& respond) {
    monitors_page(ctx, *rows_cache, r, respond);
  });
}

}  // namespace trainwatch::web
