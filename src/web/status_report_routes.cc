#include "web/status_report_routes.h"

#include <memory>
#include <string>
#include <vector>

#include "catalog/status_page_set.h"
#include "core/json_text.h"
#include "http/fresh_cache.h"
#include "views/report_request.h"
#include "web/dashboard_common.h"
#include "web/pages.h"
#include "web/report_page.h"
#include "web/time_text.h"

namespace trainwatch::web {
namespace {

namespace json = boost::json;
using http::Request;
using http::Responder;
using http::Response;

// A report reads days of rollups per monitor, and the days it covers are mostly past:
// a minute behind is nothing to its reader. Changes of state (a monitor down) show at
// once all the same (the engine's generation).
constexpr Millis kStatusReportMaxAge{60'000};

using StatusReportCache = http::FreshCache<views::ReadPageReport>;

enum class StatusReportForm { kHtml, kJson, kCsv };

json::array status_report_monitor_rows(const views::PageReport& r) {
  json::array rows;
  for (const auto& m : r.monitors) {
    const bool met = m.availability_percent && *m.availability_percent >= r.slo_percent;
    const Millis left{m.budget_ms - m.downtime_ms};
    rows.push_back(json::object{
        {"monitor", m.monitor},
        {"availability", report_percent_text(m.availability_percent)},
        {"met", met},
        {"downtime", duration_words(Millis(m.downtime_ms))},
        {"budget_left", left.count() >= 0 ? duration_words(left) + " left" : duration_words(-left) + " over"},
        {"incident_count", m.incidents.size()},
        {"mttr", m.mttr_ms ? duration_words(Millis(*m.mttr_ms)) : std::string("none ended")},
        {"longest", duration_words(Millis(m.longest_ms))}});
  }
  return rows;
}

// The page's model: the range form's values are in `m` already.
void add_status_report(const views::ReadPageReport& read, json::object& m) {
  const views::PageReport& r = read.report;
  add_report_summary(views::figures_of(r), m);
  m["monitors"] = status_report_monitor_rows(r);
  m["monitor_count"] = r.monitors.size();
  m["incidents"] = report_incident_rows(r.incidents, r.range.from_ms + r.elapsed_ms, Audience::kPublic);
  m["truncated"] = read.incidents_truncated;
}

Response status_report_response(const views::ReadPageReport& read, StatusReportForm form, json::object m) {
  if (form == StatusReportForm::kCsv) {
    Response r = Response::text(200, views::page_report_csv(read.report));
    r.content_type = "text/csv; charset=utf-8";
    return r;
  }
  if (form == StatusReportForm::kJson) {
    json::object out = views::page_report_json(read.report);
    out["incidents_truncated"] = read.incidents_truncated;
    return Response::json(200, json_text(out));
  }
  add_status_report(read, m);
  return html(200, render_page("status_report", m));
}

// An error as the form asked for it: problem+json for the API, the page with the error.
Response status_report_error(int status, const std::string& message, StatusReportForm form, json::object m) {
  if (form != StatusReportForm::kHtml) return Response::problem(status, message);
  m["error"] = message;
  return html(status, render_page("status_report", m));
}

StatusReportForm asked_form(const Request& request, bool api) {
  if (!api) return StatusReportForm::kHtml;
  const auto it = request.query.find("format");
  return it != request.query.end() && it->second == "csv" ? StatusReportForm::kCsv : StatusReportForm::kJson;
}

void status_report(const WebContext& ctx, StatusReportCache& cache, const Request& request,
                   const Responder& respond, bool api) {
  const std::string& slug = request.params.at("slug");
  std::shared_ptr<const StatusPageConfig> page = ctx.status_pages->find(slug);
  if (page == nullptr) return respond(Response::problem(404, "no status page '" + slug + "'"));
  const StatusReportForm form = asked_form(request, api);
  // A public page: no dashboard header, nothing of the reader's session.
  json::object m{{"page_title", "Report: " + page->title}, {"slug", page->slug}, {"title", page->title}};
  const SystemTime now = ctx.clock.system_time();
  auto asked = views::report_request(request.query, now);
  if (!asked) return respond(status_report_error(400, asked.error().message, form, m));
  const auto format = request.query.find("format");
  if (api && format != request.query.end() && format->second != "json" && format->second != "csv")
    return respond(status_report_error(
        400, "query parameter 'format' is '" + format->second + "'; expected json or csv", form, m));
  add_report_range(*asked, m);
  const std::string query = report_query(*asked);
  m["query"] = query;
  // A reload's new set of pages shows at once: its generation is part of the key.
  const std::string key = page->slug + '#' + std::to_string(ctx.status_pages->generation()) + '#' + query;
  auto build = [ctx, page, wanted = *asked](Audience /*always kPublic*/) -> Result<views::ReadPageReport> {
    return views::read_page_report(ctx.store, ctx.engine, *page, wanted, ctx.clock.system_time());
  };
  cache.get(Audience::kPublic, key, build,
            [respond, form, m = std::move(m)](Result<StatusReportCache::Value> built) {
              if (!built) {
                Response r = status_report_error(
                    503, "the report cannot be read now: " + built.error().message, form, m);
                r.headers.emplace_back("Retry-After", "1");
                return respond(std::move(r));
              }
              respond(status_report_response(**built, form, m));
            });
}

}  // namespace

void add_status_report_routes(http::Router& router, const WebContext& ctx) {
  const std::vector<std::string> get = {"GET", "HEAD"};
  const engine::Engine& engine = ctx.engine;
  auto cache = std::make_shared<StatusReportCache>(ctx.clock, kStatusReportMaxAge,
                                                   [&engine] { return engine.state_generation(); });
  router.add(get, "/status/{slug}/report", [ctx, cache](const Request& r, const Responder& respond) {
    status_report(ctx, *cache, r, respond, false);
  });
  router.add(get, "/api/v1/status/{slug}/report", [ctx, cache](const Request& r, const Responder& respond) {
    status_report(ctx, *cache, r, respond, true);
  });
}

}  // namespace trainwatch::web
