#include "web/monitor_events.h"

#include <algorithm>

#include "web/time_text.h"

namespace trainwatch::web {
namespace {

bool inside_incident(std::span<const Incident> incidents, SystemTime at, SystemTime now) {
  return std::any_of(incidents.begin(), incidents.end(),
                     [&](const Incident& i) { return at >= i.started && at <= i.ended.value_or(now); });
}

MonitorEvent event(std::string kind, SystemTime at, std::string text, std::optional<int64_t> incident_id) {
  MonitorEvent e;
  e.kind = std::move(kind);
  e.at = at;
  e.text = std::move(text);
  e.incident_id = incident_id;
  return e;
}

// Runs of failed checks outside every incident.
void add_failed_runs(std::span<const Incident> incidents, std::span<const CheckResult> results,
                     SystemTime now, std::vector<MonitorEvent>& out) {
  bool open = false;
  // Newest first: a run grows backwards in time, so its `at` moves to its first check.
  for (const CheckResult& r : results) {
    if (r.ok || inside_incident(incidents, r.at, now)) {
      open = false;
      continue;
    }
    if (!open) out.push_back(event("failed", r.at, "", std::nullopt));
    open = true;
    MonitorEvent& run = out.back();
    run.at = r.at;
    run.text = r.cause;  // the first failure's cause names the run
    ++run.checks;
  }
}

}  // namespace

std::vector<MonitorEvent> monitor_events(std::span<const Incident> incidents,
                                         std::span<const CheckResult> results, SystemTime now, size_t limit) {
  std::vector<MonitorEvent> out;
  for (const Incident& i : incidents) {
    if (i.ended) {
      out.push_back(
          event("up", *i.ended,
                "Up again after " + duration_words(std::chrono::duration_cast<Millis>(*i.ended - i.started)),
                i.id));
    }
    std::string text = i.cause.empty() ? std::string("Down") : i.cause;
    if (!i.caused_by.empty()) text += " (caused by " + i.caused_by + ")";
    out.push_back(event("down", i.started, std::move(text), i.id));
  }
  add_failed_runs(incidents, results, now, out);
  std::stable_sort(out.begin(), out.end(),
                   [](const MonitorEvent& a, const MonitorEvent& b) { return a.at > b.at; });
  if (out.size() > limit) out.resize(limit);
  return out;
}

std::vector<VerdictRun> verdict_runs(std::span<const CheckResult> results, size_t limit) {
  std::vector<VerdictRun> out;
  for (const CheckResult& r : results) {
    const std::string cause = r.ok ? std::string() : r.cause;
    if (!out.empty() && out.back().ok == r.ok && out.back().cause == cause) {
      out.back().from = r.at;
      ++out.back().checks;
      continue;
    }
    if (out.size() == limit) break;
    out.push_back(VerdictRun{r.ok, cause, r.at, r.at, 1});
  }
  return out;
}

}  // namespace trainwatch::web
