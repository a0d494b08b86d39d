#include "web/report_page.h"

#include <cstdio>
#include <string>
#include <vector>

#include "core/redaction.h"
#include "core/time_format.h"
#include "views/audience.h"
#include "views/monitor_report_cache.h"
#include "views/report_request.h"
#include "web/dashboard_common.h"
#include "web/pages.h"
#include "web/time_text.h"
#include "web/uptime_days.h"

namespace trainwatch::web {
namespace {

namespace json = boost::json;
using http::Request;
using http::Responder;

json::array day_rows(const views::MonitorReport& r) {
  json::array rows;
  for (const auto& d : r.days) {
    rows.push_back(json::object{
        {"date", report_date_text(d.day_ms)},
        {"availability", report_percent_text(d.availability())},
        {"downtime", d.downtime_ms > 0 ? duration_words(Millis(d.downtime_ms)) : std::string("")},
        {"incidents", d.incidents}});
  }
  return rows;
}

void report_page(const WebContext& ctx, views::MonitorReportCache& cache, const Request& request,
                 const Responder& respond) {
  const std::string& name = request.params.at("name");
  if (!ctx.engine.monitor(name))
    return respond(html(404, "<!doctype html><title>Not found</title><p>No such monitor.</p>"));
  json::object m = layout_model(ctx, request, "Report: " + name + " · trainwatch");
  m["name"] = name;
  const SystemTime now = ctx.clock.system_time();
  auto asked = views::report_request(request.query, now);
  if (!asked) {
    m["error"] = asked.error().message;
    return respond(html(400, render_page("report", m)));
  }
  add_report_range(*asked, m);
  m["query"] = report_query(*asked);
  const Audience audience = views::audience_of(&ctx.auth, request);
  cache.get(name, *asked, [respond, audience, m = std::move(m)](const auto& read) mutable {
    if (!read) {
      m["error"] = "the report cannot be read now: " + read.error().message;
      http::Response r = html(503, render_page("report", m));
      r.headers.emplace_back("Retry-After", "1");
      return respond(std::move(r));
    }
    const views::MonitorReport& r = (*read)->report;
    add_report_summary(views::figures_of(r), m);
    if (r.watched_from_ms > r.range.from_ms) m["watched_from"] = utc_text(from_unix_ms(r.watched_from_ms));
    m["incidents"] = report_incident_rows(r.incidents, r.range.from_ms + r.elapsed_ms, audience);
    m["days"] = day_rows(r);
    m["truncated"] = (*read)->incidents_truncated;
    respond(html(200, render_page("report", m)));
  });
}

}  // namespace

std::string report_date_text(int64_t ms) { return format_rfc3339(from_unix_ms(ms)).substr(0, 10); }

std::string report_percent_text(std::optional<double> pct) {
  return pct ? format_percent(*pct) : std::string("no data");
}

namespace {

// What follows the incident count: "incidents" alone when there were none, else the time
// to recovery and the longest, in words that say when none has ended yet.
std::string report_incident_words(const views::ReportFigures& f) {
  if (f.incident_count == 0) return "incidents";
  std::string out = f.incident_count == 1 ? "incident" : "incidents";
  const std::string longest = duration_words(Millis(f.longest_ms));
  if (!f.mttr_ms) return out + ", none ended yet; the longest has lasted " + longest;
  return out + "; mean time to recovery " + duration_words(Millis(*f.mttr_ms)) + ", longest " + longest;
}

}  // namespace

// The figures at the top: what a reader of the printout looks for first.
void add_report_summary(const views::ReportFigures& f, json::object& m) {
  const Millis left{f.budget_ms - f.budget_used_ms};
  m["availability"] = report_percent_text(f.availability_percent);
  m["slo"] = format_percent(f.slo_percent);
  m["verdict"] = !f.availability_percent                    ? "no checks in this range"
                 : *f.availability_percent >= f.slo_percent ? "met"
                                                            : "missed";
  m["met"] = f.availability_percent && *f.availability_percent >= f.slo_percent;
  m["downtime"] = duration_words(Millis(f.downtime_ms));
  m["budget"] = duration_words(Millis(f.budget_ms));
  m["budget_left"] = left.count() >= 0 ? duration_words(left) + " left" : duration_words(-left) + " over";
  m["incident_count"] = f.incident_count;
  m["incident_words"] = report_incident_words(f);
}

void add_report_range(const views::ReportRequest& asked, json::object& m) {
  m["from"] = report_date_text(asked.range.from_ms);
  m["to"] = report_date_text(asked.range.to_ms);
  m["last_day"] = report_date_text(asked.range.to_ms - 86'400'000);
  m["slo_value"] = json::value(asked.slo_percent);
}

std::string report_query(const views::ReportRequest& asked) {
  char slo[32];
  std::snprintf(slo, sizeof slo, "%g", asked.slo_percent);  // 99.5, not 99.500000
  return "from=" + report_date_text(asked.range.from_ms) + "&to=" + report_date_text(asked.range.to_ms) +
         "&slo=" + slo;
}

json::array report_incident_rows(std::span<const Incident> incidents, int64_t until_ms, Audience audience) {
  json::array rows;
  for (const auto& i : incidents) {
    const int64_t end = i.ended ? to_unix_ms(*i.ended) : until_ms;
    rows.push_back(json::object{
        {"id", i.id},
        {"monitor", i.monitor},
        {"started", utc_text(i.started)},
        {"ended", i.ended ? utc_text(*i.ended) : std::string("ongoing")},
        {"duration", duration_words(Millis(end - to_unix_ms(i.started)))},
        {"cause", i.cause.empty() ? std::string("Unknown cause") : cause_for(i.cause, audience)}});
  }
  return rows;
}

void add_report_page(http::Router& router, const WebContext& ctx) {
  const std::vector<std::string> get = {"GET", "HEAD"};
  auto cache = std::make_shared<views::MonitorReportCache>(ctx.engine, ctx.store, ctx.clock);
  router.add(get, "/monitors/{name}/report", [ctx, cache](const Request& r, const Responder& respond) {
    report_page(ctx, *cache, r, respond);
  });
}

}  // namespace trainwatch::web
