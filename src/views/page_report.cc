#include "views/page_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <utility>

#include "core/time_format.h"
#include "views/json_views.h"

namespace trainwatch::views {

namespace {

namespace json = boost::json;

int64_t page_incident_end_ms(const Incident& i, int64_t now_ms) {
  return i.ended ? to_unix_ms(*i.ended) : now_ms;
}

// The time inside [from, until) that at least one of the incidents covers: their
// intervals cut to the range, sorted and merged.
int64_t union_downtime_ms(const std::vector<Incident>& incidents, int64_t from, int64_t until,
                          int64_t now_ms) {
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (const auto& i : incidents) {
    const int64_t start = std::max(from, to_unix_ms(i.started));
    const int64_t end = std::min(until, page_incident_end_ms(i, now_ms));
    if (end > start) spans.emplace_back(start, end);
  }
  std::sort(spans.begin(), spans.end());
  int64_t total = 0;
  int64_t covered_to = from;
  for (const auto& [start, end] : spans) {
    const int64_t begin = std::max(start, covered_to);
    if (end > begin) total += end - begin;
    covered_to = std::max(covered_to, end);
  }
  return total;
}

// The mean of the monitors' availability, downtime and budget, over those with a check.
void add_means(PageReport& r) {
  double availability_sum = 0;
  int64_t downtime_sum = 0;
  int64_t budget_sum = 0;
  int64_t counted = 0;
  for (const auto& m : r.monitors) {
    if (!m.availability_percent) continue;
    availability_sum += *m.availability_percent;
    downtime_sum += m.downtime_ms;
    budget_sum += m.budget_ms;
    ++counted;
  }
  if (counted == 0) return;
  r.availability_percent = availability_sum / static_cast<double>(counted);
  r.budget_used_ms = downtime_sum / counted;
  r.budget_ms = budget_sum / counted;
}

void add_outages(PageReport& r, int64_t now_ms) {
  int64_t repaired_ms = 0;
  int64_t repaired = 0;
  for (const auto& m : r.monitors) {
    r.incidents.insert(r.incidents.end(), m.incidents.begin(), m.incidents.end());
    r.longest_ms = std::max(r.longest_ms, m.longest_ms);
    for (const auto& i : m.incidents) {
      if (!i.ended) continue;
      repaired_ms += to_unix_ms(*i.ended) - to_unix_ms(i.started);
      ++repaired;
    }
  }
  std::sort(r.incidents.begin(), r.incidents.end(), [](const Incident& a, const Incident& b) {
    return a.started != b.started ? a.started < b.started : a.id < b.id;
  });
  if (repaired > 0) r.mttr_ms = repaired_ms / repaired;
  r.downtime_ms = union_downtime_ms(r.incidents, r.range.from_ms, r.range.from_ms + r.elapsed_ms, now_ms);
}

std::string page_csv_seconds(std::optional<int64_t> ms) {
  if (!ms) return "";
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", static_cast<double>(*ms) / 1000.0);
  return text;
}

}  // namespace

PageReport build_page_report(std::string slug, std::string title, ReportRange range, double slo_percent,
                             std::vector<MonitorReport> monitors, int64_t now_ms) {
  PageReport r;
  r.slug = std::move(slug);
  r.title = std::move(title);
  r.range = range;
  r.slo_percent = slo_percent;
  r.elapsed_ms = std::max<int64_t>(0, std::min(range.to_ms, now_ms) - range.from_ms);
  // Without a monitor checked in the range, the budget of the range (add_means sets the
  // monitors' mean otherwise), with the same rounding as each monitor's (build_report).
  r.budget_ms = std::llround(static_cast<double>(r.elapsed_ms) * (100.0 - slo_percent) / 100.0);
  r.monitors = std::move(monitors);
  add_means(r);
  add_outages(r, now_ms);
  return r;
}

ReportFigures figures_of(const PageReport& r) {
  return ReportFigures{.slo_percent = r.slo_percent,
                       .availability_percent = r.availability_percent,
                       .downtime_ms = r.downtime_ms,
                       .budget_ms = r.budget_ms,
                       .budget_used_ms = r.budget_used_ms,
                       .incident_count = r.incidents.size(),
                       .mttr_ms = r.mttr_ms,
                       .longest_ms = r.longest_ms};
}

json::object page_report_json(const PageReport& r) {
  std::set<std::string> shown;
  json::array rows;
  for (const auto& m : r.monitors) {
    shown.insert(m.monitor);
    json::object row{{"monitor", m.monitor}};
    for (auto& [key, value] : report_figures_json(figures_of(m))) row[key] = std::move(value);
    row.erase("slo_percent");  // the page's, said once
    rows.push_back(std::move(row));
  }
  json::array incidents;
  for (const auto& i : r.incidents) {
    json::object row = incident_json(i, Audience::kPublic);
    if (!shown.contains(i.caused_by)) row["caused_by"] = nullptr;
    incidents.push_back(std::move(row));
  }
  json::object out{{"status_page", r.slug},
                   {"title", r.title},
                   {"from", format_rfc3339(from_unix_ms(r.range.from_ms))},
                   {"to", format_rfc3339(from_unix_ms(r.range.to_ms))},
                   {"elapsed_s", report_seconds(r.elapsed_ms)}};
  for (auto& [key, value] : report_figures_json(figures_of(r))) out[key] = std::move(value);
  out["monitors"] = std::move(rows);
  out["incidents"] = std::move(incidents);
  return out;
}

std::string page_report_csv(const PageReport& r) {
  std::string out =
      "monitor,checks,ok,availability_percent,downtime_s,error_budget_left_s,incidents,mttr_s,longest_outage_s\n";
  char line[512];
  for (const auto& m : r.monitors) {
    int64_t checks = 0, ok = 0;
    for (const auto& d : m.days) {
      checks += d.checks;
      ok += d.ok;
    }
    char availability[32] = "";
    if (m.availability_percent)
      std::snprintf(availability, sizeof availability, "%.4f", *m.availability_percent);
    // Monitor names are [a-z0-9._-] (core/names.h): nothing in them to quote.
    std::snprintf(line, sizeof line, "%s,%lld,%lld,%s,%s,%s,%zu,%s,%s\n", m.monitor.c_str(),
                  static_cast<long long>(checks), static_cast<long long>(ok), availability,
                  page_csv_seconds(m.downtime_ms).c_str(),
                  page_csv_seconds(m.budget_ms - m.downtime_ms).c_str(), m.incidents.size(),
                  page_csv_seconds(m.mttr_ms).c_str(), page_csv_seconds(m.longest_ms).c_str());
    out += line;
  }
  return out;
}

}  // namespace trainwatch::views
