#include "views/monitor_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/time_format.h"
#include "views/json_views.h"
#include "views/monitor_uptime.h"

namespace trainwatch::views {

namespace {

namespace json = boost::json;

constexpr int64_t kReportDayMs = 24LL * 3'600'000;

int64_t end_ms(const Incident& i, int64_t now_ms) { return i.ended ? to_unix_ms(*i.ended) : now_ms; }

// How much of [from, to) the incident covers.
int64_t overlap_ms(const Incident& i, int64_t from, int64_t to, int64_t now_ms) {
  const int64_t start = std::max(from, to_unix_ms(i.started));
  const int64_t end = std::min(to, end_ms(i, now_ms));
  return std::max<int64_t>(0, end - start);
}

std::string date_of(int64_t day_ms) { return format_rfc3339(from_unix_ms(day_ms)).substr(0, 10); }

std::vector<ReportDay> report_days(ReportRange range, std::span<const UptimeBucket> buckets,
                                   std::span<const Incident> incidents, int64_t now_ms) {
  std::vector<ReportDay> days;
  for (int64_t day = range.from_ms; day < range.to_ms && day <= now_ms; day += kReportDayMs) {
    ReportDay d;
    d.day_ms = day;
    for (const auto& b : buckets) {
      if (b.start_ms >= day && b.start_ms < day + kReportDayMs) {
        d.checks += b.checks;
        d.ok += b.ok;
      }
    }
    for (const auto& i : incidents) {
      d.downtime_ms += overlap_ms(i, day, std::min(day + kReportDayMs, now_ms), now_ms);
      const int64_t started = to_unix_ms(i.started);
      if (started >= day && started < day + kReportDayMs) ++d.incidents;
    }
    days.push_back(d);
  }
  return days;
}

}  // namespace

MonitorReport build_report(std::string monitor, ReportRange range, double slo_percent,
                           const ReportReads& reads, int64_t now_ms) {
  MonitorReport r;
  r.monitor = std::move(monitor);
  r.range = range;
  r.slo_percent = slo_percent;
  const int64_t until = std::min(range.to_ms, now_ms);
  r.elapsed_ms = std::max<int64_t>(0, until - range.from_ms);
  std::vector<UptimeBucket> inside;
  for (const auto& b : reads.day_buckets) {
    if (b.start_ms >= range.from_ms && b.start_ms < range.to_ms) inside.push_back(b);
  }
  r.availability_percent = uptime_percent(inside);
  r.watched_from_ms =
      std::max(range.from_ms, std::min(reads.first_watched_ms.value_or(range.from_ms), until));
  // Rounded, not cut: 0.1 % of 30 days is 2,592 s, not the 2,591.999 a double makes of it.
  const int64_t watched_ms = std::max<int64_t>(0, until - r.watched_from_ms);
  r.budget_ms = std::llround(static_cast<double>(watched_ms) * (100.0 - slo_percent) / 100.0);

  int64_t repaired_ms = 0;
  int repaired = 0;
  for (const auto& i : reads.incidents) {
    if (overlap_ms(i, range.from_ms, until, now_ms) == 0) continue;
    r.incidents.push_back(i);
    r.downtime_ms += overlap_ms(i, range.from_ms, until, now_ms);
    const int64_t duration = end_ms(i, now_ms) - to_unix_ms(i.started);
    r.longest_ms = std::max(r.longest_ms, duration);
    if (i.ended) {
      repaired_ms += duration;
      ++repaired;
    }
  }
  std::sort(r.incidents.begin(), r.incidents.end(),
            [](const Incident& a, const Incident& b) { return a.started < b.started; });
  if (repaired > 0) r.mttr_ms = repaired_ms / repaired;
  r.days = report_days(range, inside, r.incidents, now_ms);
  return r;
}

json::value report_seconds(int64_t ms) { return static_cast<double>(ms) / 1000.0; }

json::object error_budget_json(int64_t allowed_ms, int64_t used_ms) {
  const int64_t left = allowed_ms - used_ms;
  return json::object{{"allowed_s", report_seconds(allowed_ms)},
                      {"used_s", report_seconds(used_ms)},
                      {"left_s", report_seconds(left)},
                      {"left_percent", allowed_ms > 0 ? json::value(100.0 * static_cast<double>(left) /
                                                                    static_cast<double>(allowed_ms))
                                                      : json::value(nullptr)}};
}

ReportFigures figures_of(const MonitorReport& r) {
  return ReportFigures{.slo_percent = r.slo_percent,
                       .availability_percent = r.availability_percent,
                       .downtime_ms = r.downtime_ms,
                       .budget_ms = r.budget_ms,
                       .budget_used_ms = r.downtime_ms,
                       .incident_count = r.incidents.size(),
                       .mttr_ms = r.mttr_ms,
                       .longest_ms = r.longest_ms};
}

json::object report_figures_json(const ReportFigures& f) {
  return json::object{
      {"slo_percent", f.slo_percent},
      {"availability_percent",
       f.availability_percent ? json::value(*f.availability_percent) : json::value(nullptr)},
      {"slo_met",
       f.availability_percent ? json::value(*f.availability_percent >= f.slo_percent) : json::value(nullptr)},
      {"downtime_s", report_seconds(f.downtime_ms)},
      {"error_budget", error_budget_json(f.budget_ms, f.budget_used_ms)},
      {"incident_count", f.incident_count},
      {"mttr_s", f.mttr_ms ? report_seconds(*f.mttr_ms) : json::value(nullptr)},
      {"longest_outage_s", report_seconds(f.longest_ms)}};
}

json::object report_json(const MonitorReport& r, Audience audience) {
  json::array incidents;
  for (const auto& i : r.incidents) incidents.push_back(incident_json(i, audience));
  json::array days;
  for (const auto& d : r.days) {
    const std::optional<double> pct = d.availability();
    days.push_back(json::object{{"date", date_of(d.day_ms)},
                                {"availability_percent", pct ? json::value(*pct) : json::value(nullptr)},
                                {"downtime_s", report_seconds(d.downtime_ms)},
                                {"incidents", d.incidents}});
  }
  json::object out{{"monitor", r.monitor},
                   {"from", format_rfc3339(from_unix_ms(r.range.from_ms))},
                   {"to", format_rfc3339(from_unix_ms(r.range.to_ms))},
                   {"elapsed_s", report_seconds(r.elapsed_ms)},
                   {"watched_from", format_rfc3339(from_unix_ms(r.watched_from_ms))}};
  for (auto& [key, value] : report_figures_json(figures_of(r))) out[key] = std::move(value);
  out["incidents"] = std::move(incidents);
  out["days"] = std::move(days);
  return out;
}

std::string report_csv(const MonitorReport& r) {
  std::string out = "date,checks,ok,availability_percent,downtime_s,incidents\n";
  char line[160];
  for (const auto& d : r.days) {
    char availability[32] = "";
    if (const auto pct = d.availability()) std::snprintf(availability, sizeof availability, "%.4f", *pct);
    std::snprintf(line, sizeof line, "%s,%lld,%lld,%s,%.3f,%d\n", date_of(d.day_ms).c_str(),
                  static_cast<long long>(d.checks), static_cast<long long>(d.ok), availability,
                  static_cast<double>(d.downtime_ms) / 1000.0, d.incidents);
    out += line;
  }
  return out;
}

}  // namespace trainwatch::views
