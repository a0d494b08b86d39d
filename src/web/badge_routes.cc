#include "web/badge_routes.h"

#include <string>

#include "core/time_format.h"
#include "views/monitor_uptime.h"
#include "views/shown_state.h"
#include "web/badge.h"
#include "web/banner.h"
#include "web/uptime_days.h"

namespace trainwatch::web {
namespace {

using http::Request;
using http::Responder;
using http::Response;

void badge(const WebContext& ctx, const Request& request, const Responder& respond, bool uptime) {
  const std::string& name = request.params.at("monitor");
  auto view = ctx.engine.monitor(name);
  if (!view) return respond(Response::problem(404, "no monitor named '" + name + "'"));
  std::string value, colour;
  if (uptime) {
    const int64_t now = to_unix_ms(ctx.clock.system_time());
    auto buckets = views::uptime_buckets(
        ctx.store, *view,
        UptimeQuery{name, RollupResolution::kDay, now - now % kDayMs - 29 * kDayMs, now + 1},
        ctx.clock.system_time());
    if (!buckets) return respond(Response::problem(503, buckets.error().message));
    auto pct = uptime_percent(*buckets);
    value = pct ? format_percent(*pct) : "no data";
    colour = !pct ? "#6b7280" : *pct >= 99.9 ? "#1f7a3a" : *pct >= 95 ? "#8a4f00" : "#b3261e";
  } else {
    const views::ShownState shown = views::shown_state(*view);
    value = std::string(views::shown_word(shown));
    colour = shown == views::ShownState::kUp            ? "#1f7a3a"
             : shown == views::ShownState::kDown        ? "#b3261e"
             : shown == views::ShownState::kMaintenance ? "#1d5fa8"
                                                        : "#6b7280";
  }
  Response r;
  r.content_type = "image/svg+xml";
  r.body = render_badge(uptime ? name + " 30d" : name, value, colour);
  r.headers.emplace_back("Cache-Control", "max-age=60");
  respond(std::move(r));
}

}  // namespace

void add_badge_routes(http::Router& router, const WebContext& ctx) {
  const std::vector<std::string> get = {"GET", "HEAD"};
  router.add(get, "/badge/{monitor}/status.svg",
             [ctx](const Request& r, const Responder& respond) { badge(ctx, r, respond, false); });
  router.add(get, "/badge/{monitor}/uptime-30d.svg",
             [ctx](const Request& r, const Responder& respond) { badge(ctx, r, respond, true); });
}

}  // namespace trainwatch::web
