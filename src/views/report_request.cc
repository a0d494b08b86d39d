#include "views/report_request.h"

#include <charconv>
#include <chrono>
#include <set>

#include "views/monitor_uptime.h"

namespace trainwatch::views {
namespace {

namespace chrono = std::chrono;

constexpr int64_t kRangeDayMs = 24LL * 3'600'000;

int64_t day_ms(chrono::year_month_day date) {
  return chrono::duration_cast<Millis>(chrono::sys_days(date).time_since_epoch()).count();
}

// `name` as a UTC date (YYYY-MM-DD) in ms; `fallback` when absent.
Result<int64_t> date_param(const std::map<std::string, std::string>& query, const std::string& name,
                           int64_t fallback) {
  auto it = query.find(name);
  if (it == query.end()) return fallback;
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

Result<double> slo_param(const std::map<std::string, std::string>& query) {
  auto it = query.find("slo");
  if (it == query.end()) return 99.9;
  double value = 0;
  const std::string& text = it->second;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !(value > 0 && value < 100))
    return make_error("api.bad_param", "query parameter 'slo' is '" + text +
                                           "'; expected a percentage above 0 and below 100, as 99.9");
  return value;
}

// The range asked for; by default the current UTC month.
Result<ReportRange> range_param(const std::map<std::string, std::string>& query, SystemTime now) {
  const chrono::year_month_day today{chrono::floor<chrono::days>(now)};
  const chrono::year_month month = today.year() / today.month();
  const chrono::year_month next = month + chrono::months(1);
  auto from = date_param(query, "from", day_ms(month / chrono::day(1)));
  if (!from) return from.error();
  auto to = date_param(query, "to", day_ms(next / chrono::day(1)));
  if (!to) return to.error();
  if (*to <= *from || *to - *from > kMaxReportDays * kRangeDayMs)
    return make_error("api.bad_param", "the range is " + std::to_string((*to - *from) / kRangeDayMs) +
                                           " days; expected 'to' after 'from', at most " +
                                           std::to_string(kMaxReportDays) + " days");
  return ReportRange{*from, *to};
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

Result<ReportRequest> report_request(const std::map<std::string, std::string>& query, SystemTime now) {
  auto range = range_param(query, now);
  if (!range) return range.error();
  auto slo = slo_param(query);
  if (!slo) return slo.error();
  return ReportRequest{*range, *slo};
}

Result<ReadReport> read_report(Store& store, const engine::MonitorView& view, const ReportRequest& request,
                               SystemTime now) {
  const std::string& name = view.config->name;
  auto buckets = uptime_buckets(
      store, view, UptimeQuery{name, RollupResolution::kDay, request.range.from_ms, request.range.to_ms},
      now);
  if (!buckets) return buckets.error();
  auto watched = first_watched_ms(store, name, to_unix_ms(now));
  if (!watched) return watched.error();
  ReadReport out;
  auto incidents = incidents_since(store, name, request.range.from_ms, out.incidents_truncated);
  if (!incidents) return incidents.error();
  out.report = build_report(name, request.range, request.slo_percent,
                            ReportReads{*buckets, *incidents, *watched}, to_unix_ms(now));
  return out;
}

Result<ReadPageReport> read_page_report(Store& store, const engine::Engine& engine,
                                        const StatusPageConfig& page, const ReportRequest& request,
                                        SystemTime now) {
  ReadPageReport out;
  std::vector<MonitorReport> monitors;
  std::set<std::string> seen;
  for (const StatusPageGroup& group : page.groups) {
    for (const std::string& name : group.monitors) {
      if (!seen.insert(name).second) continue;
      auto view = engine.monitor(name);
      if (!view) continue;
      auto read = read_report(store, *view, request, now);
      if (!read) return read.error();
      out.incidents_truncated = out.incidents_truncated || read->incidents_truncated;
      monitors.push_back(std::move(read->report));
    }
  }
  out.report = build_page_report(page.slug, page.title, request.range, request.slo_percent,
                                 std::move(monitors), to_unix_ms(now));
  return out;
}

}  // namespace trainwatch::views
