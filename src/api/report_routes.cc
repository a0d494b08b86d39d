#include "api/report_routes.h"

#include <charconv>
#include <chrono>

#include "core/json_text.h"
#include "core/time_format.h"
#include "views/audience.h"
#include "views/monitor_report.h"
#include "views/monitor_uptime.h"

namespace trainwatch::api {
namespace {

using http::Request;
using http::Responder;
using http::Response;
namespace chrono = std::chrono;

constexpr int64_t kDayMs = 24LL * 3'600'000;

int64_t day_ms(chrono::year_month_day date) {
  return chrono::duration_cast<Millis>(chrono::sys_days(date).time_since_epoch()).count();
}

// `name` as a UTC date (YYYY-MM-DD) in ms; `fallback` when absent.
Result<int64_t> date_param(const Request& request, const std::string& name, int64_t fallback) {
  auto it = request.query.find(name);
  if (it == request.query.end()) return fallback;
  const std::string& text = it->second;
  int y = 0;
  unsigned m = 0, d = 0;
  const bool shaped = text.size() == 10 && text[4] == '-' && text[7] == '-' &&
                      std::from_chars(text.data(), text.data() + 4, y).ptr == text.data() + 4 &&
                      std::from_chars(text.data() + 5, text.data() + 7, m).ptr == text.data() + 7 &&
                      std::from_chars(text.data() + 8, text.data() + 10, d).ptr == text.data() + 10;
  const chrono::year_month_day date{chrono::year(y), chrono::month(m), chrono::day(d)};
  if (!shaped || !date.ok())
    return make_error("api.bad_param",
                      "query parameter '" + name + "' is '" + text + "'; expected a date, YYYY-MM-DD");
  return day_ms(date);
}

Result<double> slo_param(const Request& request) {
  auto it = request.query.find("slo");
  if (it == request.query.end()) return 99.9;
  double value = 0;
  const std::string& text = it->second;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !(value > 0 && value < 100))
    return make_error("api.bad_param", "query parameter 'slo' is '" + text +
                                           "'; expected a percentage above 0 and below 100, as 99.9");
  return value;
}

// The range asked for; by default the current UTC month.
Result<views::ReportRange> range_param(const Request& request, SystemTime now) {
  const chrono::year_month_day today{chrono::floor<chrono::days>(now)};
  const chrono::year_month month = today.year() / today.month();
  const chrono::year_month next = month + chrono::months(1);
  auto from = date_param(request, "from", day_ms(month / chrono::day(1)));
  if (!from) return from.error();
  auto to = date_param(request, "to", day_ms(next / chrono::day(1)));
  if (!to) return to.error();
  if (*to <= *from || *to - *from > kMaxReportDays * kDayMs)
    return make_error("api.bad_param", "the range is " + std::to_string((*to - *from) / kDayMs) +
                                           " days; expected 'to' after 'from', at most " +
                                           std::to_string(kMaxReportDays) + " days");
  return views::ReportRange{*from, *to};
}

// The incidents that may overlap the range: newest first, page by page, until one started
// before it (and every older one did too) or the bound.
Result<std::vector<Incident>> incidents_since(Store& store, const std::string& monitor, int64_t from_ms,
                                              bool& truncated) {
  std::vector<Incident> out;
  IncidentQuery query{monitor, std::nullopt, 500};
  while (out.size() < static_cast<size_t>(kMaxReportIncidents)) {
    auto page = store.incidents(query);
    if (!page) return page.error();
    for (const auto& i : *page) out.push_back(i);
    // Ids grow with start times, so a page whose oldest began before the range ends it;
    // an older incident still open would show as the monitor's open one, started earlier.
    if (static_cast<int>(page->size()) < query.limit || to_unix_ms(page->back().started) < from_ms)
      return out;
    query.before_id = page->back().id;
  }
  truncated = true;
  return out;
}

}  // namespace

void get_monitor_report(const ApiContext& ctx, const Request& request, const Responder& respond) {
  const std::string& name = request.params.at("name");
  auto view = ctx.engine.monitor(name);
  if (!view) return respond(Response::problem(404, "no monitor named '" + name + "'"));
  const SystemTime now = ctx.clock.system_time();
  auto range = range_param(request, now);
  if (!range) return respond(Response::problem(400, range.error().message));
  auto slo = slo_param(request);
  if (!slo) return respond(Response::problem(400, slo.error().message));
  const auto format = request.query.count("format") ? request.query.at("format") : std::string("json");
  if (format != "json" && format != "csv")
    return respond(
        Response::problem(400, "query parameter 'format' is '" + format + "'; expected json or csv"));

  auto buckets = views::uptime_buckets(
      ctx.store, *view, UptimeQuery{name, RollupResolution::kDay, range->from_ms, range->to_ms}, now);
  if (!buckets) return respond(Response::problem(503, "uptime cannot be read: " + buckets.error().message));
  bool truncated = false;
  auto incidents = incidents_since(ctx.store, name, range->from_ms, truncated);
  if (!incidents)
    return respond(Response::problem(503, "incidents cannot be read: " + incidents.error().message));

  const views::MonitorReport report =
      views::build_report(name, *range, *slo, *buckets, *incidents, to_unix_ms(now));
  if (format == "csv") {
    Response r = Response::text(200, views::report_csv(report));
    r.content_type = "text/csv; charset=utf-8";
    return respond(std::move(r));
  }
  boost::json::object out = views::report_json(report, views::audience_of(ctx.admin, request));
  out["incidents_truncated"] = truncated;
  respond(Response::json(200, json_text(out)));
}

}  // namespace trainwatch::api
