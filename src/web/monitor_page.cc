#include "web/monitor_page.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "core/duration.h"
#include "core/time_format.h"
#include "cron/zone.h"
#include "views/audience.h"
#include "views/incident_views.h"
#include "views/json_views.h"
#include "web/banner.h"
#include "web/dashboard_common.h"
#include "web/pages.h"
#include "web/uptime_days.h"

namespace trainwatch::web {
namespace {

namespace json = boost::json;
using http::Request;
using http::Responder;

// The heartbeat part of a monitor page: the last ping's age on one bar against period and
// grace (the bar's scale is period + grace; past that it is full), when the next ping is
// due, and the ping log. A schedule's "period" on the bar is the span from the last ping
// to the fire time it awaits.
void add_heartbeat(const WebContext& ctx, const Request& request, Audience audience,
                   const engine::MonitorView& view, json::object& m) {
  json::object hb = views::heartbeat_json(view, audience);
  const auto& spec = std::get<HeartbeatSpec>(view.config->spec);
  // The whole ping URL only for an editor or admin (or a server without admin tokens):
  // whoever has it can keep the monitor up.
  if (sees_monitor_secrets(audience)) {
    hb["ping_url"] = "http://" + std::string(request.header("host")) + "/ping/" + spec.token;
  }
  Millis period = spec.period;
  if (spec.schedule && view.heartbeat->last_ping && view.heartbeat->next_expected) {
    period = std::max(Millis(0), std::chrono::duration_cast<Millis>(*view.heartbeat->next_expected -
                                                                    view.heartbeat->last_ping->ping.at));
  }
  if (view.heartbeat->next_expected) {
    // In the schedule's own zone, as its author reads "0 3 * * *"; UTC for a period.
    hb["next_expected_text"] = cron::format_local(
        *view.heartbeat->next_expected, spec.schedule ? spec.schedule->zone : cctz::utc_time_zone());
  }
  const double scale = static_cast<double>((period + spec.grace).count());
  hb["period"] = format_duration(spec.period);
  hb["grace"] = format_duration(spec.grace);
  hb["period_pct"] = scale > 0 ? 100.0 * static_cast<double>(period.count()) / scale : 100.0;
  if (view.heartbeat->last_ping) {
    const auto age =
        std::chrono::duration_cast<Millis>(ctx.clock.system_time() - view.heartbeat->last_ping->ping.at);
    hb["age"] = format_duration(age);
    hb["age_pct"] = scale > 0 ? std::min(100.0, 100.0 * static_cast<double>(age.count()) / scale) : 100.0;
  }
  m["heartbeat"] = std::move(hb);
  json::array pings;
  if (auto p = ctx.store.pings(PingQuery{view.config->name, std::nullopt, 50})) {
    for (const auto& ping : *p) pings.push_back(views::ping_json(ping, audience));
  }
  m["pings"] = std::move(pings);
}

void monitor_page(const WebContext& ctx, const Request& request, const Responder& respond) {
  const std::string& name = request.params.at("name");
  auto view = ctx.engine.monitor(name);
  if (!view) return respond(html(404, "<!doctype html><title>Not found</title><p>No such monitor.</p>"));
  json::object m = layout_model(ctx, request, name + " · trainwatch");
  const Audience audience = views::audience_of(&ctx.auth, request);
  json::object summary = views::monitor_summary(*view, audience);
  for (auto& [k, v] : summary) m[k] = v;
  m["status_word"] = status_word(view->state.status);
  m["status_icon"] = status_icon(view->state.status);
  m["paused"] = view->state.status == MonitorStatus::kPaused;
  m["from_api"] = ctx.catalog.is_api(name);
  // The edit form's JSON holds the whole URL (credentials included): admins only.
  if (auto spec = ctx.catalog.api_spec(name); spec && sees_monitor_secrets(audience)) m["spec_json"] = *spec;
  m["is_job"] = view->config->type == MonitorType::kJob;
  const int64_t now = to_unix_ms(ctx.clock.system_time());
  json::array uptime;
  const std::pair<const char*, int64_t> windows[] = {
      {"24 hours", kDayMs}, {"7 days", 7 * kDayMs}, {"30 days", 30 * kDayMs}, {"90 days", 90 * kDayMs}};
  for (const auto& [label, width] : windows) {
    // Hourly rows for the short windows (at most 168), daily rows for the long ones (at most 90).
    const bool hourly = width <= 7 * kDayMs;
    auto buckets = ctx.store.uptime(
        UptimeQuery{name, hourly ? RollupResolution::kHour : RollupResolution::kDay, now - width, now + 1});
    auto pct = buckets ? uptime_percent(*buckets) : std::nullopt;
    uptime.push_back(
        json::object{{"window", label}, {"text", pct ? format_percent(*pct) : std::string("no data")}});
  }
  m["uptime"] = std::move(uptime);
  json::array results, incidents;
  if (auto r = ctx.store.results(ResultQuery{name, std::nullopt, 50})) {
    for (const auto& result : *r) results.push_back(views::check_result_json(result, audience));
  }
  if (auto i = ctx.store.incidents(IncidentQuery{name, std::nullopt, 20})) {
    std::vector<int64_t> ids;
    for (const auto& incident : *i) ids.push_back(incident.id);
    auto updates = ctx.store.incident_updates(ids);
    for (const auto& incident : *i) {
      json::object o = views::incident_json(incident, audience);
      json::array timeline;
      if (updates) {
        if (auto it = updates->find(incident.id); it != updates->end()) {
          // Newest first, as the status page shows them.
          for (auto u = it->second.rbegin(); u != it->second.rend(); ++u) {
            json::object row = views::incident_update_json(*u);
            row["status_title"] = status_title(u->status);
            timeline.push_back(std::move(row));
          }
        }
      }
      o["has_updates"] = !timeline.empty();
      o["updates"] = std::move(timeline);
      incidents.push_back(std::move(o));
    }
  }
  m["results"] = std::move(results);
  m["incidents"] = std::move(incidents);
  if (view->heartbeat) add_heartbeat(ctx, request, audience, *view, m);
  respond(html(200, render_page("monitor", m)));
}

}  // namespace

void add_monitor_page(http::Router& router, const WebContext& ctx) {
  const std::vector<std::string> get = {"GET", "HEAD"};
  router.add(get, "/monitors/{name}",
             [ctx](const Request& r, const Responder& respond) { monitor_page(ctx, r, respond); });
}

}  // namespace trainwatch::web
