#include "web/monitor_page_parts.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "core/incident_update.h"
#include "core/time_format.h"
#include "cron/zone.h"
#include "views/incident_views.h"
#include "views/job_views.h"
#include "views/json_views.h"
#include "web/heartbeat_due.h"
#include "web/recent_checks.h"
#include "web/time_text.h"

namespace trainwatch::web {
namespace {

namespace json = boost::json;

constexpr int kPingLog = 50;

// Newest first, as status pages show them.
json::array update_rows(const std::vector<IncidentUpdate>& updates, SystemTime now) {
  json::array out;
  for (auto u = updates.rbegin(); u != updates.rend(); ++u) {
    json::object row = views::incident_update_json(*u);
    row["status_title"] = status_title(u->status);
    row["at_t"] = time_json(u->at, now);
    out.push_back(std::move(row));
  }
  return out;
}

std::string text_of(const json::value& v) {
  if (v.is_string()) return std::string(v.as_string());
  if (v.is_null()) return "?";
  return json::serialize(v);
}

}  // namespace

std::optional<json::object> certificate_card(const engine::MonitorView& view, SystemTime now) {
  if (!view.last_result || !view.last_result->certificate_expires) return std::nullopt;
  const SystemTime expires = *view.last_result->certificate_expires;
  const auto left = std::chrono::duration_cast<Millis>(expires - now);
  const int64_t days = left.count() / 86'400'000;
  std::string text = left.count() < 0 ? "expired" : days == 1 ? "1 day" : std::to_string(days) + " days";
  return json::object{{"text", std::move(text)},
                      {"expires_t", time_json(expires, now)},
                      {"soon", left.count() < 14 * 86'400'000LL}};
}

json::array range_links(const std::string& current) {
  json::array out;
  for (const char* r : {"1h", "24h", "7d", "30d"}) {
    const std::string value = r;
    std::string label = value.substr(0, value.size() - 1) + " " + value.back();
    out.push_back(json::object{{"value", value}, {"label", label}, {"current", value == current}});
  }
  return out;
}

std::optional<json::object> timings_card(const engine::MonitorView& view) {
  if (view.config->type != MonitorType::kHttp || !view.last_result) return std::nullopt;
  const HttpTimings& t = view.last_result->timings;
  if (t.total_ms <= 0) return std::nullopt;
  json::array phases;
  const std::pair<const char*, double> parts[] = {
      {"DNS", t.dns_ms}, {"connect", t.connect_ms}, {"TLS", t.tls_ms}, {"first byte", t.first_byte_ms}};
  double before = 0;
  for (const auto& [label, at] : parts) {
    if (at <= 0) continue;
    const double took = std::max(0.0, at - before);
    char pct[16];
    std::snprintf(pct, sizeof pct, "%.1f", 100.0 * took / t.total_ms);
    phases.push_back(json::object{{"label", label}, {"text", latency_text(took)}, {"pct", pct}});
    before = at;
  }
  return json::object{{"phases", std::move(phases)}, {"total", latency_text(t.total_ms)}};
}

json::array event_rows(const WebContext& ctx, const std::vector<MonitorEvent>& events, Audience audience,
                       SystemTime now) {
  std::vector<int64_t> ids;
  for (const MonitorEvent& e : events) {
    if (e.kind == "down" && e.incident_id) ids.push_back(*e.incident_id);
  }
  auto updates = ctx.store.incident_updates(ids);
  json::array out;
  for (const MonitorEvent& e : events) {
    json::object row{{"kind", e.kind}, {"at_t", time_json(e.at, now)}, {"text", cause_for(e.text, audience)}};
    row["is_" + e.kind] = true;
    if (e.kind == "failed")
      row["checks_text"] = std::to_string(e.checks) + (e.checks == 1 ? " failed check" : " failed checks");
    if (e.kind == "down" && e.incident_id) {
      row["id"] = *e.incident_id;
      if (updates) {
        if (auto it = updates->find(*e.incident_id); it != updates->end()) {
          row["updates"] = update_rows(it->second, now);
          row["has_updates"] = true;
        }
      }
    }
    out.push_back(std::move(row));
  }
  return out;
}

json::array verdict_rows(std::span<const CheckResult> results, Audience audience, SystemTime now) {
  json::array out;
  for (const VerdictRun& run : verdict_runs(results, 20)) {
    out.push_back(
        json::object{{"ok", run.ok},
                     {"cause", cause_for(run.cause, audience)},
                     {"from_t", time_json(run.from, now)},
                     {"lasted", duration_words(std::chrono::duration_cast<Millis>(run.to - run.from))},
                     {"checks", run.checks}});
  }
  return out;
}

void add_job_interruptions(const WebContext& ctx, const std::string& job, SystemTime now, json::object& m) {
  auto snapshot = ctx.jobs.snapshot(job);
  if (!snapshot) return;
  json::object detail = views::job_detail_json(ctx.engine, *snapshot);
  json::array rows;
  const json::array& entries = detail.at("interruptions").as_array();
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
    const json::object& i = it->as_object();
    json::object row{{"attempt", i.at("attempt")},
                     {"cause", i.at("cause")},
                     {"detail", i.at("detail")},
                     {"steps_lost", text_of(i.at("steps_lost"))},
                     {"detected_in", duration_words(Millis(i.at("detect_ms").to_number<int64_t>()))},
                     {"restart_in", duration_words(Millis(i.at("restart_ms").to_number<int64_t>()))},
                     {"open", i.at("resumed_at").is_null()}};
    if (auto at = parse_rfc3339(std::string(i.at("failed_at").as_string())))
      row["failed_t"] = time_json(*at, now);
    rows.push_back(std::move(row));
  }
  char goodput[32];
  std::snprintf(goodput, sizeof goodput, "%.1f%%",
                100.0 * detail.at("goodput").as_object().at("ratio").to_number<double>());
  m["job_ledger"] = json::object{{"goodput", goodput}, {"rows", std::move(rows)}, {"none", entries.empty()}};
}

void add_heartbeat(const WebContext& ctx, const http::Request& request, Audience audience,
                   const engine::MonitorView& view, SystemTime now, json::object& m) {
  json::object hb = views::heartbeat_json(view, audience);
  const auto& spec = std::get<HeartbeatSpec>(view.config->spec);
  // The whole ping URL only for an editor or admin (or a server without admin tokens):
  // whoever has it can keep the monitor up.
  if (sees_monitor_secrets(audience)) {
    hb["ping_url"] = "http://" + std::string(request.header("host")) + "/ping/" + spec.token;
  }
  Millis period = spec.period;
  if (spec.schedule && view.heartbeat->last_ping && view.heartbeat->next_expected) {
    period = std::max(Millis(0), std::chrono::duration_cast<Millis>(*view.heartbeat->next_expected -
                                                                    view.heartbeat->last_ping->ping.at));
  }
  if (view.heartbeat->next_expected) {
    // In the schedule's own zone, as its author reads "0 3 * * *"; UTC for a period.
    hb["next_expected_text"] = cron::format_local(
        *view.heartbeat->next_expected, spec.schedule ? spec.schedule->zone : cctz::utc_time_zone());
  }
  const double scale = static_cast<double>((period + spec.grace).count());
  hb["period"] = duration_words(spec.period);
  hb["grace"] = duration_words(spec.grace);
  hb["period_pct"] = scale > 0 ? 100.0 * static_cast<double>(period.count()) / scale : 100.0;
  if (view.heartbeat->last_ping) {
    const auto age = std::chrono::duration_cast<Millis>(now - view.heartbeat->last_ping->ping.at);
    hb["age"] = duration_words(age);
    hb["age_pct"] = scale > 0 ? std::min(100.0, 100.0 * static_cast<double>(age.count()) / scale) : 100.0;
  }
  if (view.heartbeat->open_start) hb["started_t"] = time_json(*view.heartbeat->open_start, now);
  m["heartbeat"] = std::move(hb);
  json::array pings;
  auto read = ctx.store.pings(PingQuery{view.config->name, std::nullopt, kPingLog});
  auto failed = ctx.store.results(ResultQuery{view.config->name, std::nullopt, kPingLog});
  if (read) {
    const auto timings =
        ping_timings(*read, spec.schedule ? std::nullopt : std::optional(spec.period), spec.grace);
    for (size_t i = 0; i < read->size(); ++i) {
      json::object row = views::ping_json((*read)[i], audience);
      row["at_t"] = time_json((*read)[i].ping.at, now);
      if ((*read)[i].run_ms) row["run_text"] = duration_words(Millis(*(*read)[i].run_ms));
      row["timing"] = timings[i].text;
      row["late"] = timings[i].late;
      row["missed"] = timings[i].missed;
      pings.push_back(std::move(row));
    }
    if (failed) m["beats_html"] = beats_html(beats_from_pings(*read, *failed, 50), 50);
  }
  m["pings"] = std::move(pings);
}

}  // namespace trainwatch::web
