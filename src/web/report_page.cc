#include "web/report_page.h"

#include <cstdio>
#include <string>
#include <vector>

#include "core/redaction.h"
#include "core/time_format.h"
#include "views/audience.h"
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

std::string date_text(int64_t ms) { return format_rfc3339(from_unix_ms(ms)).substr(0, 10); }

std::string percent_text(std::optional<double> pct) {
  return pct ? format_percent(*pct) : std::string("no data");
}

// The figures at the top: what a reader of the printout looks for first.
void add_summary(const views::MonitorReport& r, json::object& m) {
  const Millis left{r.budget_ms - r.downtime_ms};
  m["availability"] = percent_text(r.availability_percent);
  m["slo"] = format_percent(r.slo_percent);
  m["verdict"] = !r.availability_percent                    ? "no checks in this range"
                 : *r.availability_percent >= r.slo_percent ? "met"
                                                            : "missed";
  m["met"] = r.availability_percent && *r.availability_percent >= r.slo_percent;
  m["downtime"] = duration_words(Millis(r.downtime_ms));
  m["budget"] = duration_words(Millis(r.budget_ms));
  m["budget_left"] = left.count() >= 0 ? duration_words(left) + " left" : duration_words(-left) + " over";
  m["incident_count"] = r.incidents.size();
  m["mttr"] = r.mttr_ms ? duration_words(Millis(*r.mttr_ms)) : std::string("none ended");
  m["longest"] = duration_words(Millis(r.longest_ms));
}

json::array incident_rows(const views::MonitorReport& r, Audience audience) {
  json::array rows;
  for (const auto& i : r.incidents) {
    const int64_t end = i.ended ? to_unix_ms(*i.ended) : r.range.from_ms + r.elapsed_ms;
    rows.push_back(json::object{
        {"id", i.id},
        {"started", utc_text(i.started)},
        {"ended", i.ended ? utc_text(*i.ended) : std::string("ongoing")},
        {"duration", duration_words(Millis(end - to_unix_ms(i.started)))},
        {"cause", i.cause.empty() ? std::string("Unknown cause") : cause_for(i.cause, audience)}});
  }
  return rows;
}

json::array day_rows(const views::MonitorReport& r) {
  json::array rows;
  for (const auto& d : r.days) {
    const std::optional<double> pct =
        d.checks > 0 ? std::optional(100.0 * static_cast<double>(d.ok) / static_cast<double>(d.checks))
                     : std::nullopt;
    rows.push_back(json::object{
        {"date", date_text(d.day_ms)},
        {"availability", percent_text(pct)},
        {"downtime", d.downtime_ms > 0 ? duration_words(Millis(d.downtime_ms)) : std::string("")},
        {"incidents", d.incidents}});
  }
  return rows;
}

void report_page(const WebContext& ctx, const Request& request, const Responder& respond) {
  const std::string& name = request.params.at("name");
  auto view = ctx.engine.monitor(name);
  if (!view) return respond(html(404, "<!doctype html><title>Not found</title><p>No such monitor.</p>"));
  json::object m = layout_model(ctx, request, "Report: " + name + " · trainwatch");
  m["name"] = name;
  const SystemTime now = ctx.clock.system_time();
  auto asked = views::report_request(request.query, now);
  if (!asked) {
    m["error"] = asked.error().message;
    return respond(html(400, render_page("report", m)));
  }
  m["from"] = date_text(asked->range.from_ms);
  m["to"] = date_text(asked->range.to_ms);
  m["last_day"] = date_text(asked->range.to_ms - 86'400'000);
  m["slo_value"] = json::value(asked->slo_percent);
  auto read = views::read_report(ctx.store, *view, *asked, now);
  if (!read) {
    m["error"] = "the report cannot be read now: " + read.error().message;
    return respond(html(503, render_page("report", m)));
  }
  add_summary(read->report, m);
  m["incidents"] = incident_rows(read->report, views::audience_of(&ctx.auth, request));
  m["days"] = day_rows(read->report);
  m["truncated"] = read->incidents_truncated;
  char slo[32];
  std::snprintf(slo, sizeof slo, "%g", asked->slo_percent);  // 99.5, not 99.500000
  m["query"] =
      "from=" + date_text(asked->range.from_ms) + "&to=" + date_text(asked->range.to_ms) + "&slo=" + slo;
  respond(html(200, render_page("report", m)));
}

}  // namespace

void add_report_page(http::Router& router, const WebContext& ctx) {
  const std::vector<std::string> get = {"GET", "HEAD"};
  router.add(get, "/monitors/{name}/report",
             [ctx](const Request& r, const Responder& respond) { report_page(ctx, r, respond); });
}

}  // namespace trainwatch::web
