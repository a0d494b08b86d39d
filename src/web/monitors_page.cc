#include "web/monitors_page.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "http/fresh_cache.h"
#include "views/audience.h"
#include "views/shown_state.h"
#include "views/write_access.h"
#include "web/dashboard_common.h"
#include "web/monitor_rows.h"
#include "web/pages.h"

namespace trainwatch::web {
namespace {

namespace json = boost::json;
using http::Request;
using http::Responder;

// The monitors table of one filter shows every change of state the engine had applied
// when it was asked for (fresh_cache.h); its latencies, check times, beats and uptime are
// at most this much older than the request.
constexpr Millis kMonitorRowsMaxAge{1'000};

using MonitorRowsCache = http::FreshCache<std::string>;

std::string query_value(const Request& request, const char* key) {
  auto it = request.query.find(key);
  return it == request.query.end() ? std::string() : it->second.substr(0, 200);
}

ListFilter filter_of(const Request& request) {
  return ListFilter{query_value(request, "state"), query_value(request, "type"), query_value(request, "tag"),
                    query_value(request, "q"), query_value(request, "group") == "tag"};
}

// The filter bar's choices, with the current ones selected.
void add_filter_model(const WebContext& ctx, const ListFilter& filter, json::object& m) {
  std::set<std::string> tags;
  for (const auto& v : ctx.engine.monitors()) tags.insert(v.config->tags.begin(), v.config->tags.end());
  json::array states, types, tag_options;
  for (const char* s : {"down", "pending", "maintenance", "up", "paused"})
    states.push_back(json::object{{"value", s}, {"selected", filter.state == s}});
  for (const char* t : {"http", "tcp", "tls", "dns", "icmp", "heartbeat", "job"})
    types.push_back(json::object{{"value", t}, {"selected", filter.type == t}});
  for (const auto& t : tags) tag_options.push_back(json::object{{"value", t}, {"selected", filter.tag == t}});
  m["state_options"] = std::move(states);
  m["type_options"] = std::move(types);
  m["tag_options"] = std::move(tag_options);
  m["q"] = filter.query;
  m["by_tag"] = filter.by_tag;
}

void monitors_page(const WebContext& ctx, MonitorRowsCache& cache, const Request& request,
                   const Responder& respond) {
  const ListFilter filter = filter_of(request);
  // The table is the same for every visitor of one audience with this filter; the page
  // around it carries the visitor's session (the forms' CSRF token).
  const Audience audience = views::audience_of(&ctx.auth, request);
  const std::string key = filter.state + '\n' + filter.type + '\n' + filter.tag + '\n' + filter.query +
                          (filter.by_tag ? "\nt" : "");
  auto build = [ctx, filter](Audience built_for) -> Result<std::string> {
    return render_monitor_rows(ctx, built_for, filter);
  };
  // The live refresh (static/dashboard.js) asks for the rows alone.
  const bool rows_only = query_value(request, "part") == "rows";
  json::object m;
  if (!rows_only) {
    m = layout_model(ctx, request, "Monitors · trainwatch");
    add_filter_model(ctx, filter, m);
  }
  cache.get(audience, key, build,
            [respond, rows_only, m = std::move(m)](Result<MonitorRowsCache::Value> rows) mutable {
              if (!rows) {
                http::Response r = http::Response::problem(
                    503, "the monitors table cannot be read: " + rows.error().message);
                r.headers.emplace_back("Retry-After", "1");
                return respond(std::move(r));
              }
              if (rows_only) {
                http::Response r = html(200, "");
                r.shared_body = *rows;
                r.headers.emplace_back("Cache-Control", "no-store");
                return respond(std::move(r));
              }
              m["rows_html"] = **rows;  // rendered by the template engine, every text escaped
              respond(html(200, render_page("monitors", m)));
            });
}

// Pause or resume every monitor picked in the list ("pick.<name>" boxes), then back to
// the list. At most kMaxListRows names: as many as the list shows.
void bulk_form(const WebContext& ctx, const Request& request, const Responder& respond) {
  std::map<std::string, std::string> form;
  if (!form_allowed(ctx, request, form, respond, auth::Role::kEditor)) return;
  const bool pause = form["action"] == "pause";
  if (!pause && form["action"] != "resume")
    return respond(http::Response::problem(400, "action: expected pause or resume"));
  std::vector<std::string> names;
  for (const auto& [key, value] : form) {
    if (key.starts_with("pick.") && names.size() < kMaxListRows) names.push_back(key.substr(5));
  }
  const std::string back = form["back"].starts_with("/?") ? form["back"] : std::string("/");
  if (names.empty()) return respond(redirect(back));
  // Answered once every change is stored (or refused: the first refusal is the answer).
  struct Pending {
    std::atomic<size_t> left;
    std::mutex mu;
    std::optional<Error> refused;
  };
  auto pending = std::make_shared<Pending>();
  pending->left = names.size();
  for (const auto& name : names) {
    ctx.engine.set_paused(name, pause, [pending, respond, back](const Status& stored) {
      if (!stored && stored.error().code != "monitor.not_found") {
        std::lock_guard lock(pending->mu);
        if (!pending->refused) pending->refused = stored.error();
      }
      if (pending->left.fetch_sub(1) != 1) return;
      std::lock_guard lock(pending->mu);
      respond(pending->refused ? views::problem_for(*pending->refused) : redirect(back));
    });
  }
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
  router.add("POST", "/monitors/bulk",
             [ctx](const Request& r, const Responder& respond) { bulk_form(ctx, r, respond); });
}

}  // namespace trainwatch::web
