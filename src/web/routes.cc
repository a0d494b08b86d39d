#include "web/routes.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>

#include "api/audience.h"
#include "api/json_views.h"
#include "api/monitor_write_routes.h"
#include "auth/form.h"
#include "auth/request_auth.h"
#include "auth/sha256.h"
#include "core/duration.h"
#include "core/time_format.h"
#include "web/assets.h"
#include "web/badge.h"
#include "web/banner.h"
#include "web/dashboard_common.h"
#include "web/job_page.h"
#include "web/pages.h"
#include "web/status_page.h"
#include "http/ttl_cache.h"
#include "web/uptime_days.h"

namespace trainwatch::web {
namespace {

namespace json = boost::json;
using http::Request;
using http::Responder;
using http::Response;

using auth::kSessionCookie;
constexpr const char* kLoginCsrfCookie = "tw_login_csrf";
// A status page is rebuilt at most this often: a burst of visitors costs one build.
constexpr Millis kStatusPageTtl{5'000};
// The monitors page lists at most this many rows (down ones first) and says how many
// more match; filters narrow it. Each row costs one read of at most 24 hourly rows.
constexpr size_t kMaxListRows = 100;
// The monitors table is rebuilt at most this often per filter (ttl_cache.h): under load
// it is at most this old; the page's script refreshes states every few seconds anyway.
constexpr Millis kMonitorRowsTtl{1'000};
constexpr int64_t kHourMs = 3'600'000;
constexpr int64_t kDayMs = 86'400'000;

bool behind_https(const Request& request) { return request.header("x-forwarded-proto") == "https"; }

std::string cookie(const Request& request, std::string_view name, std::string_view value, std::string_view max_age) {
  std::string c = std::string(name) + "=" + std::string(value) + "; Path=/; HttpOnly; SameSite=Strict; Max-Age=" +
                  std::string(max_age);
  if (behind_https(request)) c += "; Secure";
  return c;
}

// The page of that slug in the current set; it keeps that set alive while in use.
std::shared_ptr<const StatusPageConfig> find_page(const WebContext& ctx, const std::string& slug) {
  auto pages = ctx.status_pages->get();
  for (const auto& p : *pages) {
    if (p.slug == slug) return std::shared_ptr<const StatusPageConfig>(pages, &p);
  }
  return nullptr;
}

// A status page as the bytes sent, both forms.
struct BuiltStatusPage {
  std::string json;
  std::string html;
};
using StatusPageCache = http::TtlCache<BuiltStatusPage>;
using MonitorRowsCache = http::TtlCache<std::string>;

void status_page(const WebContext& ctx, StatusPageCache& cache, const Request& request, Responder respond, bool as_json) {
  std::shared_ptr<const StatusPageConfig> page = find_page(ctx, request.params.at("slug"));
  if (page == nullptr) return respond(Response::problem(404, "no status page '" + request.params.at("slug") + "'"));
  const std::string key = page->slug + '#' + std::to_string(ctx.status_pages->generation());
  auto built = cache.get(key, ctx.clock.monotonic_time(), [ctx, page]() -> Result<BuiltStatusPage> {
    auto model = build_status_page(*page, ctx.engine, ctx.store, ctx.clock.system_time());
    if (!model) return model.error();
    return BuiltStatusPage{json::serialize(*model), render_status_page_html(*model)};
  });
  if (!built) return respond(Response::problem(503, "the status page cannot be read: " + built.error().message));
  // The cached bytes go out as they are, shared (aliasing the cache entry), not copied:
  // the page is 136 KB with 20 monitors, and the copy per request was most of its cost.
  const std::shared_ptr<const BuiltStatusPage>& entry = *built;
  Response r = as_json ? Response::json(200, "") : html(200, "");
  r.shared_body = std::shared_ptr<const std::string>(entry, as_json ? &entry->json : &entry->html);
  respond(std::move(r));
}

void badge(const WebContext& ctx, const Request& request, Responder respond, bool uptime) {
  const std::string& name = request.params.at("monitor");
  auto view = ctx.engine.monitor(name);
  if (!view) return respond(Response::problem(404, "no monitor named '" + name + "'"));
  std::string value, colour;
  if (uptime) {
    const int64_t now = to_unix_ms(ctx.clock.system_time());
    auto buckets = ctx.store.uptime(UptimeQuery{name, RollupResolution::kDay, now - now % kDayMs - 29 * kDayMs, now + 1});
    if (!buckets) return respond(Response::problem(503, buckets.error().message));
    auto pct = uptime_percent(*buckets);
    value = pct ? format_percent(*pct) : "no data";
    colour = !pct ? "#6b7280" : *pct >= 99.9 ? "#1f7a3a" : *pct >= 95 ? "#8a4f00" : "#b3261e";
  } else {
    value = std::string(status_word(view->state.status));
    colour = view->state.status == MonitorStatus::kUp     ? "#1f7a3a"
             : view->state.status == MonitorStatus::kDown ? "#b3261e"
                                                          : "#6b7280";
  }
  Response r;
  r.content_type = "image/svg+xml";
  r.body = render_badge(uptime ? name + " 30d" : name, value, colour);
  r.headers.emplace_back("Cache-Control", "max-age=60");
  respond(std::move(r));
}

void static_file(const Request& request, Responder respond) {
  const std::string name = "static/" + request.params.at("rest");
  auto data = find_asset(name);
  if (!data) return respond(Response::problem(404, "no such file"));
  Response r;
  r.content_type = std::string(content_type_for(name));
  r.body = std::string(*data);
  r.headers.emplace_back("Cache-Control", "max-age=3600");
  respond(std::move(r));
}

// `status` is 403 for a wrong token, 429 (with Retry-After from the caller) when the
// address is out of attempts; the form is shown either way so the person can try later.
void login_page(const WebContext& ctx, const Request& request, Responder respond, const std::string& error,
                int status = 403, std::optional<Millis> retry_after = std::nullopt) {
  // Double-submit: before a session exists, the form's token must equal a cookie that
  // only this site could set.
  const std::string csrf = auth::random_token();
  json::object m = layout_model(ctx, request, "Log in · trainwatch");
  m["csrf"] = csrf;
  if (!ctx.auth.enabled()) {
    m["error"] = "No admin token is configured (auth.admin_tokens or TRAINWATCH_ADMIN_TOKEN), so nobody can log in.";
  } else if (!error.empty()) {
    m["error"] = error;
  }
  Response r = html(error.empty() ? 200 : status, render_page("login", m));
  r.headers.emplace_back("Set-Cookie", cookie(request, kLoginCsrfCookie, csrf, "3600"));
  if (retry_after) r.headers.emplace_back("Retry-After", std::to_string((retry_after->count() + 999) / 1000));
  respond(std::move(r));
}

void login(const WebContext& ctx, const Request& request, Responder respond) {
  auto form = auth::parse_form(request.body);
  const std::string expected = auth::cookie_value(request.header("cookie"), kLoginCsrfCookie);
  if (expected.empty() || !constant_time_equal(form["csrf"], expected)) {
    return respond(Response::problem(403, "the form's CSRF token is missing or wrong; reload the login page"));
  }
  // An address out of attempts is not answered on its token at all (auth/admin_auth.h).
  if (auto wait = ctx.auth.throttled(request.remote_address)) {
    const auto seconds = std::to_string((wait->count() + 999) / 1000);
    return login_page(ctx, request, std::move(respond),
                      "Too many wrong tokens from this address; try again in " + seconds + " s.", 429, *wait);
  }
  auto session = ctx.auth.login(form["token"], request.remote_address);
  if (!session) return login_page(ctx, request, std::move(respond), "That token is not an admin token.");
  Response r = redirect("/");
  // The cookie lasts as long as the session (auth.session_ttl); the server expires it too.
  const auto ttl_s = std::chrono::duration_cast<std::chrono::seconds>(ctx.auth.session_ttl()).count();
  r.headers.emplace_back("Set-Cookie", cookie(request, kSessionCookie, session->id, std::to_string(ttl_s)));
  r.headers.emplace_back("Set-Cookie", cookie(request, kLoginCsrfCookie, "", "0"));
  respond(std::move(r));
}

void logout(const WebContext& ctx, const Request& request, Responder respond) {
  auto session = session_of(ctx, request);
  auto form = auth::parse_form(request.body);
  if (!session || !constant_time_equal(form["csrf"], session->csrf_token)) {
    return respond(Response::problem(403, "the form's CSRF token is missing or wrong for this session"));
  }
  ctx.auth.logout(session->id);
  Response r = redirect("/login");
  r.headers.emplace_back("Set-Cookie", cookie(request, kSessionCookie, "", "0"));
  respond(std::move(r));
}

// A 24 h latency sparkline from a monitor's hourly buckets (24 at most).
std::pair<std::string, std::string> sparkline(const std::vector<UptimeBucket>& buckets, int64_t now_ms) {
  if (buckets.empty()) return {"", "no latency data in the last 24 hours"};
  double max = 0;
  for (const auto& b : buckets) max = std::max(max, b.latency_sum_ms / static_cast<double>(std::max<int64_t>(b.checks, 1)));
  std::string path;
  const int64_t from = now_ms - 24 * kHourMs;
  for (const auto& b : buckets) {
    const double mean = b.latency_sum_ms / static_cast<double>(std::max<int64_t>(b.checks, 1));
    const double x = 120.0 * static_cast<double>(b.start_ms - from) / static_cast<double>(24 * kHourMs);
    const double y = 22.0 - (max > 0 ? 20.0 * mean / max : 0);
    path += (path.empty() ? "M" : " L") + std::to_string(static_cast<int>(x)) + " " + std::to_string(static_cast<int>(y));
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
  std::vector<MonitorView> views = ctx.engine.monitors();
  std::erase_if(views, [&](const MonitorView& v) {
    const auto& tags = v.config->tags;
    return (!state.empty() && to_string(v.state.status) != state) || (!type.empty() && to_string(v.config->type) != type) ||
           (!tag.empty() && std::find(tags.begin(), tags.end(), tag) == tags.end());
  });
  // What is down comes first; then by name.
  std::stable_sort(views.begin(), views.end(), [](const MonitorView& a, const MonitorView& b) {
    return status_rank(a.state.status) < status_rank(b.state.status);
  });
  const int64_t now = to_unix_ms(ctx.clock.system_time());
  json::object m;
  if (views.size() > kMaxListRows) {
    m["more"] = json::object{{"shown", kMaxListRows}, {"total", views.size()}};
    views.resize(kMaxListRows);
  }
  std::vector<std::string> names;
  for (const MonitorView& v : views) names.push_back(v.config->name);
  // One read for every shown row's sparkline (kMaxListRows is below the store's batch bound).
  auto hourly = ctx.store.uptime_of(names, UptimeQuery{"", RollupResolution::kHour, now - 24 * kHourMs, now + 1});
  const std::vector<UptimeBucket> none;
  json::array rows;
  for (const MonitorView& v : views) {
    json::object row = api::monitor_summary(v, audience);
    row["status_word"] = status_word(v.state.status);
    row["status_icon"] = status_icon(v.state.status);
    const std::vector<UptimeBucket>* buckets = &none;
    if (hourly) {
      if (auto it = hourly->find(v.config->name); it != hourly->end()) buckets = &it->second;
    }
    auto [path, label] = sparkline(*buckets, now);
    row["spark_path"] = path;
    row["spark_label"] = label;
    rows.push_back(std::move(row));
  }
  m["monitors"] = std::move(rows);
  return render_page("part_monitor_rows", m);
}

void monitors_page(const WebContext& ctx, MonitorRowsCache& cache, const Request& request, Responder respond) {
  auto q = [&](const char* key) {
    auto it = request.query.find(key);
    return it == request.query.end() ? std::string() : it->second;
  };
  const std::string state = q("state"), type = q("type"), tag = q("tag");
  // The table is the same for every visitor of one audience with this filter; the page
  // around it carries the visitor's session (the forms' CSRF token).
  const Audience audience = api::audience_of(&ctx.auth, request);
  const std::string key = (audience == Audience::kAdmin ? "admin\n" : "public\n") + state + '\n' + type + '\n' + tag;
  auto rows = cache.get(key, ctx.clock.monotonic_time(), [ctx, audience, state, type, tag]() -> Result<std::string> {
    return render_monitor_rows(ctx, audience, state, type, tag);
  });
  json::object m = layout_model(ctx, request, "Monitors · trainwatch");
  m["rows_html"] = **rows;  // rendered by the template engine, every text escaped
  json::array states, types;
  for (const char* s : {"down", "pending", "up", "paused"}) states.push_back(json::object{{"value", s}, {"selected", state == s}});
  for (const char* t : {"http", "tcp", "heartbeat", "job"}) types.push_back(json::object{{"value", t}, {"selected", type == t}});
  m["state_options"] = std::move(states);
  m["type_options"] = std::move(types);
  m["tag"] = tag;
  respond(html(200, render_page("monitors", m)));
}

// The heartbeat part of a monitor page: the last ping's age on one bar against period and
// grace (the bar's scale is period + grace; past that it is full), and the ping log.
void add_heartbeat(const WebContext& ctx, const Request& request, Audience audience, const MonitorView& view,
                   json::object& m) {
  json::object hb = api::heartbeat_json(view, audience);
  const auto& spec = std::get<HeartbeatSpec>(view.config->spec);
  // The whole ping URL only for an admin (or a server without admin tokens): whoever has
  // it can keep the monitor up.
  if (audience == Audience::kAdmin) {
    hb["ping_url"] = "http://" + std::string(request.header("host")) + "/ping/" + spec.token;
  }
  const double scale = static_cast<double>((spec.period + spec.grace).count());
  hb["period"] = format_duration(spec.period);
  hb["grace"] = format_duration(spec.grace);
  hb["period_pct"] = scale > 0 ? 100.0 * static_cast<double>(spec.period.count()) / scale : 100.0;
  if (view.heartbeat->last_ping) {
    const auto age = std::chrono::duration_cast<Millis>(ctx.clock.system_time() - view.heartbeat->last_ping->ping.at);
    hb["age"] = format_duration(age);
    hb["age_pct"] = scale > 0 ? std::min(100.0, 100.0 * static_cast<double>(age.count()) / scale) : 100.0;
  }
  m["heartbeat"] = std::move(hb);
  json::array pings;
  if (auto p = ctx.store.pings(PingQuery{view.config->name, std::nullopt, 50})) {
    for (const auto& ping : *p) pings.push_back(api::ping_json(ping, audience));
  }
  m["pings"] = std::move(pings);
}

void monitor_page(const WebContext& ctx, const Request& request, Responder respond) {
  const std::string& name = request.params.at("name");
  auto view = ctx.engine.monitor(name);
  if (!view) return respond(html(404, "<!doctype html><title>Not found</title><p>No such monitor.</p>"));
  json::object m = layout_model(ctx, request, name + " · trainwatch");
  const Audience audience = api::audience_of(&ctx.auth, request);
  json::object summary = api::monitor_summary(*view, audience);
  for (auto& [k, v] : summary) m[k] = v;
  m["status_word"] = status_word(view->state.status);
  m["status_icon"] = status_icon(view->state.status);
  m["paused"] = view->state.status == MonitorStatus::kPaused;
  m["from_api"] = ctx.catalog.is_api(name);
  // The edit form's JSON holds the whole URL (credentials included): admins only.
  if (auto spec = ctx.catalog.api_spec(name); spec && audience == Audience::kAdmin) m["spec_json"] = *spec;
  m["is_job"] = view->config->type == MonitorType::kJob;
  const int64_t now = to_unix_ms(ctx.clock.system_time());
  json::array uptime;
  const std::pair<const char*, int64_t> windows[] = {{"24 hours", kDayMs}, {"7 days", 7 * kDayMs}, {"30 days", 30 * kDayMs}, {"90 days", 90 * kDayMs}};
  for (const auto& [label, width] : windows) {
    // Hourly rows for the short windows (at most 168), daily rows for the long ones (at most 90).
    const bool hourly = width <= 7 * kDayMs;
    auto buckets = ctx.store.uptime(UptimeQuery{name, hourly ? RollupResolution::kHour : RollupResolution::kDay, now - width, now + 1});
    auto pct = buckets ? uptime_percent(*buckets) : std::nullopt;
    uptime.push_back(json::object{{"window", label}, {"text", pct ? format_percent(*pct) : std::string("no data")}});
  }
  m["uptime"] = std::move(uptime);
  json::array results, incidents;
  if (auto r = ctx.store.results(ResultQuery{name, std::nullopt, 50})) {
    for (const auto& result : *r) results.push_back(api::check_result_json(result, audience));
  }
  if (auto i = ctx.store.incidents(IncidentQuery{name, std::nullopt, 20})) {
    for (const auto& incident : *i) incidents.push_back(api::incident_json(incident, audience));
  }
  m["results"] = std::move(results);
  m["incidents"] = std::move(incidents);
  if (view->heartbeat) add_heartbeat(ctx, request, audience, *view, m);
  respond(html(200, render_page("monitor", m)));
}

void pause_form(const WebContext& ctx, const Request& request, Responder respond, bool paused) {
  std::map<std::string, std::string> form;
  if (!form_allowed(ctx, request, form, respond)) return;
  const std::string name = request.params.at("name");
  ctx.engine.set_paused(name, paused, [respond, name](bool found) {
    respond(found ? redirect("/monitors/" + name) : Response::problem(404, "no monitor named '" + name + "'"));
  });
}

void delete_form(const WebContext& ctx, const Request& request, Responder respond) {
  std::map<std::string, std::string> form;
  if (!form_allowed(ctx, request, form, respond)) return;
  ctx.catalog.remove(request.params.at("name"), [respond](Result<std::string> r) {
    respond(r ? redirect("/") : Response::problem(api::status_for(r.error()), r.error().message));
  });
}

// The dashboard's "new monitor" form: a few fields turned into the API's JSON object, so
// both are validated by the same loader.
void create_form(const WebContext& ctx, const Request& request, Responder respond) {
  std::map<std::string, std::string> form;
  if (!form_allowed(ctx, request, form, respond)) return;
  json::object spec{{"name", form["name"]}, {"type", form["type"]}, {"interval", form["interval"].empty() ? "60s" : form["interval"]}};
  if (form["type"] == "tcp") {
    const std::string& target = form["target"];
    const auto colon = target.rfind(':');
    spec["host"] = target.substr(0, colon);
    spec["port"] = colon == std::string::npos ? json::value("") : json::value(target.substr(colon + 1));
  } else {
    spec["url"] = form["target"];
  }
  ctx.catalog.put("", json::serialize(spec), true, [respond](Result<std::string> r) {
    respond(r ? redirect("/monitors/" + *r) : Response::problem(api::status_for(r.error()), r.error().message));
  });
}

// The dashboard's edit form: an API monitor's whole JSON object, replaced as PUT does.
void edit_form(const WebContext& ctx, const Request& request, Responder respond) {
  std::map<std::string, std::string> form;
  if (!form_allowed(ctx, request, form, respond)) return;
  ctx.catalog.put(request.params.at("name"), form["spec"], false, [respond](Result<std::string> r) {
    respond(r ? redirect("/monitors/" + *r) : Response::problem(api::status_for(r.error()), r.error().message));
  });
}

}  // namespace

void add_web_routes(http::Router& router, const WebContext& ctx) {
  const std::vector<std::string> get = {"GET", "HEAD"};
  auto cache = std::make_shared<StatusPageCache>(kStatusPageTtl);
  auto rows_cache = std::make_shared<MonitorRowsCache>(kMonitorRowsTtl);
  router.add(get, "/status/{slug}", [ctx, cache](const Request& r, Responder respond) {
    status_page(ctx, *cache, r, std::move(respond), false);
  });
  router.add(get, "/api/v1/status/{slug}", [ctx, cache](const Request& r, Responder respond) {
    status_page(ctx, *cache, r, std::move(respond), true);
  });
  router.add(get, "/badge/{monitor}/status.svg", [ctx](const Request& r, Responder respond) { badge(ctx, r, std::move(respond), false); });
  router.add(get, "/badge/{monitor}/uptime-30d.svg", [ctx](const Request& r, Responder respond) { badge(ctx, r, std::move(respond), true); });
  router.add(get, "/static/{rest...}", [](const Request& r, Responder respond) { static_file(r, std::move(respond)); });
  router.add(get, "/login", [ctx](const Request& r, Responder respond) { login_page(ctx, r, std::move(respond), ""); });
  router.add("POST", "/login", [ctx](const Request& r, Responder respond) { login(ctx, r, std::move(respond)); });
  router.add("POST", "/logout", [ctx](const Request& r, Responder respond) { logout(ctx, r, std::move(respond)); });
  router.add(get, "/", [ctx, rows_cache](const Request& r, Responder respond) {
    monitors_page(ctx, *rows_cache, r, std::move(respond));
  });
  add_job_pages(router, ctx);
  router.add(get, "/monitors/{name}", [ctx](const Request& r, Responder respond) { monitor_page(ctx, r, std::move(respond)); });
  router.add("POST", "/monitors", [ctx](const Request& r, Responder respond) { create_form(ctx, r, std::move(respond)); });
  router.add("POST", "/monitors/{name}/pause", [ctx](const Request& r, Responder respond) { pause_form(ctx, r, std::move(respond), true); });
  router.add("POST", "/monitors/{name}/resume", [ctx](const Request& r, Responder respond) { pause_form(ctx, r, std::move(respond), false); });
  router.add("POST", "/monitors/{name}/edit", [ctx](const Request& r, Responder respond) { edit_form(ctx, r, std::move(respond)); });
  router.add("POST", "/monitors/{name}/delete", [ctx](const Request& r, Responder respond) { delete_form(ctx, r, std::move(respond)); });
}

}  // namespace trainwatch::web
