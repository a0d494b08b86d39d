#include "web/monitor_page.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "catalog/monitor_catalog.h"
#include "catalog/monitor_snooze.h"
#include "config/monitor_target.h"
#include "core/time_format.h"
#include "views/audience.h"
#include "views/incident_views.h"
#include "views/json_views.h"
#include "views/maintenance_views.h"
#include "views/monitor_uptime.h"
#include "views/shown_state.h"
#include "web/banner.h"
#include "web/dashboard_common.h"
#include "web/heartbeat_due.h"
#include "web/monitor_events.h"
#include "web/monitor_page_parts.h"
#include "web/monitor_series.h"
#include "web/pages.h"
#include "web/recent_checks.h"
#include "web/time_text.h"
#include "web/uptime_days.h"

namespace trainwatch::web {
namespace {

namespace json = boost::json;
using http::Request;
using http::Responder;

// Results read for the page's events and verdicts (the chart reads its own).
constexpr int kEventResults = 1'000;
constexpr size_t kMaxEvents = 50;

// Uptime over the last hour, day, week and month: time not DOWN (views/monitor_uptime.h);
// the hour from incidents, as an hourly rollup row is as long as the window.
json::array uptime_cards(const WebContext& ctx, const engine::MonitorView& view, SystemTime now) {
  const int64_t now_ms = to_unix_ms(now);
  const std::string& name = view.config->name;
  struct Window {
    const char* label;
    int64_t width;
    RollupResolution resolution;
  };
  const Window windows[] = {{"1 h", kHourMs, RollupResolution::kHour},
                            {"24 h", kDayMs, RollupResolution::kHour},
                            {"7 d", 7 * kDayMs, RollupResolution::kHour},
                            {"30 d", 30 * kDayMs, RollupResolution::kDay}};
  json::array out;
  for (const Window& w : windows) {
    const UptimeQuery query{name, w.resolution, now_ms - w.width, now_ms + 1};
    auto buckets = w.width == kHourMs ? views::time_uptime_buckets(ctx.store, query, now)
                                      : views::uptime_buckets(ctx.store, view, query, now);
    auto pct = buckets ? uptime_percent(*buckets) : std::nullopt;
    out.push_back(
        json::object{{"window", w.label}, {"text", pct ? format_percent(*pct) : std::string("no data")}});
  }
  return out;
}

void add_header(const WebContext& ctx, const engine::MonitorView& view, Audience audience, SystemTime now,
                json::object& m) {
  const views::ShownState shown = views::shown_state(view);
  m["status"] = views::shown_code(shown);
  m["status_word"] = views::shown_word(shown);
  m["status_icon"] = views::shown_icon(shown);
  m["since_t"] = time_json(view.state.since, now);
  m["paused"] = view.state.status == MonitorStatus::kPaused;
  m["is_job"] = view.config->type == MonitorType::kJob;
  m["is_heartbeat"] = view.config->type == MonitorType::kHeartbeat;
  if (view.maintenance_until) m["maintenance_until"] = time_json(*view.maintenance_until, now);
  if (ctx.snoozes != nullptr) {
    m["snoozes"] = true;
    const auto until =
        views::snoozed_until(ctx.snoozes->windows(), view.config->name, view.config->tags, now);
    if (until) m["snoozed_until"] = time_json(*until, now);
  }
  if (auto due = heartbeat_due(view, now))
    m["due"] = json::object{{"text", due->text}, {"overdue", due->overdue}};
  if (!view.state.last_error.empty()) m["last_error"] = cause_for(view.state.last_error, audience);
  if (view.state.last_check) m["last_check_t"] = time_json(*view.state.last_check, now);
  m["from_api"] = ctx.catalog.is_api(view.config->name);
  m["has_tags"] = !view.config->tags.empty();
}

void monitor_page(const WebContext& ctx, const Request& request, const Responder& respond) {
  const std::string& name = request.params.at("name");
  auto view = ctx.engine.monitor(name);
  if (!view) return respond(html(404, "<!doctype html><title>Not found</title><p>No such monitor.</p>"));
  json::object m = layout_model(ctx, request, name + " · trainwatch");
  const Audience audience = views::audience_of(&ctx.auth, request);
  for (auto& [k, v] : views::monitor_summary(*view, audience)) m[k] = v;
  const SystemTime now = ctx.clock.system_time();
  add_header(ctx, *view, audience, now, m);
  m["uptime"] = uptime_cards(ctx, *view, now);
  if (auto certificate = certificate_card(*view, now)) m["certificate"] = std::move(*certificate);
  auto range = chart_range(request.query.count("range") ? request.query.at("range") : "24h");
  if (!range) range = chart_range("24h");
  m["ranges"] = range_links(range->name);
  m["range"] = range->name;
  if (auto timings = timings_card(*view)) m["timings"] = std::move(*timings);
  auto results = ctx.store.results(ResultQuery{name, std::nullopt, kEventResults});
  auto incidents = ctx.store.incidents(IncidentQuery{name, std::nullopt, static_cast<int>(kMaxEvents)});
  if (results && incidents) {
    m["events"] = event_rows(ctx, monitor_events(*incidents, *results, now, kMaxEvents), audience, now);
    if (view->config->type == MonitorType::kJob) m["verdicts"] = verdict_rows(*results, audience, now);
  } else {
    m["read_error"] = (results ? incidents.error() : results.error()).message;
  }
  if (view->config->type == MonitorType::kJob) add_job_interruptions(ctx, name, now, m);
  if (view->heartbeat) add_heartbeat(ctx, request, audience, *view, now, m);
  respond(html(200, render_page("monitor", m)));
}

void series(const WebContext& ctx, const Request& request, const Responder& respond) {
  const std::string& name = request.params.at("name");
  if (!ctx.engine.monitor(name))
    return respond(http::Response::problem(404, "no monitor named '" + name + "'"));
  const auto it = request.query.find("range");
  auto range = chart_range(it == request.query.end() ? "24h" : it->second);
  if (!range) return respond(http::Response::problem(400, "range: expected 1h, 24h, 7d or 30d"));
  auto body = monitor_series(ctx.store, name, *range, ctx.clock.system_time());
  if (!body)
    return respond(http::Response::problem(503, "the series cannot be read: " + body.error().message));
  respond(http::Response::json(200, json::serialize(*body)));
}

}  // namespace

void add_monitor_page(http::Router& router, const WebContext& ctx) {
  const std::vector<std::string> get = {"GET", "HEAD"};
  router.add(get, "/monitors/{name}",
             [ctx](const Request& r, const Responder& respond) { monitor_page(ctx, r, respond); });
  router.add(get, "/monitors/{name}/series",
             [ctx](const Request& r, const Responder& respond) { series(ctx, r, respond); });
}

}  // namespace trainwatch::web
