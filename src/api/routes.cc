#include "api/routes.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>

#include "api/job_routes.h"
#include "api/metrics_page.h"
#include "api/monitor_list_cache.h"
#include "api/query_params.h"
#include "api/report_routes.h"
#include "core/json_text.h"
#include "core/time_format.h"
#include "views/audience.h"
#include "views/json_views.h"

namespace trainwatch::api {
namespace {

namespace json = boost::json;
using http::Request;
using http::Responder;
using http::Response;

constexpr int64_t kMaxPageSize = 1000;

Response json_response(const json::value& value) { return Response::json(200, json_text(value)); }

// A cached view that cannot be had now (http/fresh_cache.h): too many waiting, or its build failed.
Response busy(const Error& error) {
  Response r = Response::problem(503, error.message);
  r.headers.emplace_back("Retry-After", "1");
  return r;
}

void list_monitors(const ApiContext& ctx, MonitorListCache& cache, const Request& request,
                   const Responder& respond) {
  cache.body(views::audience_of(ctx.admin, request), [respond](Result<MonitorListCache::Body> body) {
    if (!body) return respond(busy(body.error()));
    Response r = Response::json(200, "");
    r.shared_body = std::move(*body);
    respond(std::move(r));
  });
}

void get_monitor(const ApiContext& ctx, const Request& request, const Responder& respond) {
  const std::string& name = request.params.at("name");
  auto view = ctx.engine.monitor(name);
  if (!view) return respond(Response::problem(404, "no monitor named '" + name + "'"));
  auto limit = int_param(request, "limit", 50, 1, kMaxPageSize);
  if (!limit) return respond(Response::problem(400, limit.error().message));
  auto before = time_ms_param(request, "before");
  if (!before) return respond(Response::problem(400, before.error().message));

  auto results = ctx.store.results(ResultQuery{name, *before, static_cast<int>(*limit)});
  if (!results) return respond(Response::problem(503, "results cannot be read: " + results.error().message));

  const Audience audience = views::audience_of(ctx.admin, request);
  json::object out = views::monitor_summary(*view, audience);
  out["retries"] = view->config->retries;
  out["timeout_ms"] = view->config->timeout.count();
  out["consecutive_failures"] = view->state.consecutive_failures;
  out["last_result"] = view->last_result ? json::value(views::check_result_json(*view->last_result, audience))
                                         : json::value(nullptr);
  out["incident"] = view->open_incident ? json::value(views::incident_json(*view->open_incident, audience))
                                        : json::value(nullptr);
  json::array items;
  for (const auto& r : *results) items.push_back(views::check_result_json(r, audience));
  out["results"] = std::move(items);
  if (const auto* hb = std::get_if<HeartbeatSpec>(&view->config->spec)) {
    // The URL as this client reached the server, so it can be pasted as is; only for
    // those allowed to see it, since whoever has it can keep the monitor up.
    const std::string_view host = request.header("host");
    out["ping_url"] = sees_monitor_secrets(audience)
                          ? json::value((host.empty() ? std::string() : "http://" + std::string(host)) +
                                        "/ping/" + hb->token)
                          : json::value(nullptr);
    out["heartbeat"] = views::heartbeat_json(*view, audience);
  }
  respond(json_response(out));
}

void list_pings(const ApiContext& ctx, const Request& request, const Responder& respond) {
  const std::string& name = request.params.at("name");
  auto view = ctx.engine.monitor(name);
  if (!view) return respond(Response::problem(404, "no monitor named '" + name + "'"));
  if (view->config->type != MonitorType::kHeartbeat) {
    return respond(Response::problem(404, "monitor '" + name + "' is not a heartbeat monitor"));
  }
  auto page = page_params(request, kMaxPageSize);
  if (!page) return respond(Response::problem(400, page.error().message));
  PingQuery query{name, page->before_id, page->limit};
  auto pings = ctx.store.pings(query);
  if (!pings) return respond(Response::problem(503, "pings cannot be read: " + pings.error().message));
  json::array items;
  const Audience audience = views::audience_of(ctx.admin, request);
  for (const auto& ping : *pings) items.push_back(views::ping_json(ping, audience));
  json::object out{{"pings", std::move(items)}};
  if (!pings->empty() && static_cast<int>(pings->size()) == page->limit)
    out["next_before"] = pings->back().id;
  respond(json_response(out));
}

void list_incidents(const ApiContext& ctx, const Request& request, const Responder& respond) {
  IncidentQuery query;
  if (auto it = request.query.find("monitor"); it != request.query.end()) query.monitor = it->second;
  auto page = page_params(request, kMaxPageSize);
  if (!page) return respond(Response::problem(400, page.error().message));
  query.limit = page->limit;
  query.before_id = page->before_id;
  auto incidents = ctx.store.incidents(query);
  if (!incidents)
    return respond(Response::problem(503, "incidents cannot be read: " + incidents.error().message));
  json::array items;
  const Audience audience = views::audience_of(ctx.admin, request);
  for (const auto& incident : *incidents) items.push_back(views::incident_json(incident, audience));
  json::object out{{"incidents", std::move(items)}};
  if (!incidents->empty() && static_cast<int>(incidents->size()) == page->limit)
    out["next_before"] = incidents->back().id;
  respond(json_response(out));
}

// 503 "degraded" while the store refuses writes (a full disk), or while a write has waited
// WriteHealth::kLateWrites (a locked table, a stalled server): nothing new is recorded and
// no state change goes out then, which a load balancer or a person should hear of. Also
// while the outbox cannot be read for as long: changes are stored, but no alert leaves.
// Healthy again once a write commits and the outbox is read. And while this replica acts
// on nothing because its beats fail (cut off from the database): a load balancer should
// send pings to another.
void healthz(const ApiContext& ctx, const Request&, const Responder& respond) {
  engine::EngineStats stats = ctx.engine.stats();
  const WriteHealth store = ctx.store.write_health();
  const std::optional<std::string> outbox = ctx.outbox_trouble ? ctx.outbox_trouble() : std::nullopt;
  const std::optional<std::string> replica = ctx.replica_trouble ? ctx.replica_trouble() : std::nullopt;
  // Heartbeat deadlines that wait because their pings cannot be read (a locked table):
  // after as long as late writes, the same thing seen from the other side.
  const MonoTime now = ctx.clock.monotonic_time();
  const bool pings_unreadable =
      stats.pings_unreadable_since && now - *stats.pings_unreadable_since >= WriteHealth::kLateWrites;
  const bool degraded = store.refusing || store.late() || outbox || replica || pings_unreadable;
  json::object out{{"status", degraded ? "degraded" : "ok"},
                   {"monitors", stats.monitors},
                   {"checks_in_flight", stats.checks_in_flight},
                   {"started_at", format_rfc3339(ctx.started_at)}};
  if (ctx.replicas) {
    json::object replicas = ctx.replicas();
    replicas["owned"] = stats.owned;
    out["replicas"] = std::move(replicas);
  }
  if (!degraded) return respond(json_response(out));
  if (store.refusing) {
    out["reason"] = "the store refuses writes: " + store.reason;
  } else if (store.late()) {
    out["reason"] = fmt::format(
        "the store's writes are late: the batch being committed has waited {:.1f} s ({} write(s) queued "
        "behind it)",
        static_cast<double>(store.writing_for.count()) / 1000.0, store.queued);
  } else if (outbox || replica) {
    out["reason"] = outbox ? *outbox : "this replica acts on nothing: " + *replica;
  } else {
    out["reason"] = fmt::format(
        "heartbeat deadlines wait: their pings cannot be read for {:.1f} s (checks go on): {}",
        static_cast<double>(std::chrono::duration_cast<Millis>(now - *stats.pings_unreadable_since).count()) /
            1000.0,
        stats.pings_unreadable_reason);
  }
  out["state_changes_waiting"] = stats.changes_waiting;
  respond(Response::json(503, json_text(out)));
}

}  // namespace

void add_api_routes(http::Router& router, const ApiContext& ctx) {
  // Handlers capture the context by value: it holds references to objects that outlive
  // the server (see cli/serve_command.cc).
  auto bind = [ctx](void (*fn)(const ApiContext&, const Request&, const Responder&)) {
    return [ctx, fn](const Request& request, const Responder& respond) { fn(ctx, request, respond); };
  };
  const std::vector<std::string> get = {"GET", "HEAD"};
  auto list_cache = std::make_shared<MonitorListCache>(ctx.engine, ctx.clock);
  router.add(get, "/api/v1/monitors", [ctx, list_cache](const Request& request, const Responder& respond) {
    list_monitors(ctx, *list_cache, request, respond);
  });
  router.add(get, "/api/v1/monitors/{name}", bind(get_monitor));
  router.add(get, "/api/v1/monitors/{name}/pings", bind(list_pings));
  auto report_cache = std::make_shared<views::MonitorReportCache>(ctx.engine, ctx.store, ctx.clock);
  router.add(get, "/api/v1/monitors/{name}/report",
             [ctx, report_cache](const Request& request, const Responder& respond) {
               get_monitor_report(ctx, *report_cache, request, respond);
             });
  router.add(get, "/api/v1/incidents", bind(list_incidents));
  router.add(get, "/healthz", bind(healthz));
  router.add(get, "/metrics", [ctx](const Request&, const Responder& respond) {
    std::string text = render_metrics(ctx.engine, &ctx.store);
    if (ctx.extra_metrics) {
      PrometheusWriter extra;
      ctx.extra_metrics(extra);
      text += extra.take();
    }
    if (ctx.jobs) text += render_job_metrics(*ctx.jobs, ctx.job_metrics_here);
    Response response = Response::text(200, std::move(text));
    response.content_type = "text/plain; version=0.0.4; charset=utf-8";
    respond(std::move(response));
  });
}

}  // namespace trainwatch::api
