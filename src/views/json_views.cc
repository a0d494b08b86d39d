#include "views/json_views.h"

#include "config/monitor_target.h"
#include "core/time_format.h"

namespace trainwatch::views {
namespace {

boost::json::value time_or_null(const std::optional<SystemTime>& t) {
  if (!t) return nullptr;
  return boost::json::string(format_rfc3339(*t));
}

boost::json::value cause_or_null(const std::string& cause, Audience audience) {
  if (cause.empty()) return nullptr;
  return boost::json::string(cause_for(cause, audience));
}

}  // namespace

boost::json::object monitor_summary(const engine::MonitorView& view, Audience audience) {
  const MonitorConfig& config = *view.config;
  const MonitorState& state = view.state;
  boost::json::array tags;
  for (const auto& tag : config.tags) tags.emplace_back(tag);
  boost::json::object out;
  out["name"] = config.name;
  out["type"] = to_string(config.type);
  out["target"] = describe_target(config, audience);
  out["status"] = to_string(state.status);
  out["since"] = format_rfc3339(state.since);
  out["last_check"] = time_or_null(state.last_check);
  out["last_latency_ms"] =
      state.last_check ? boost::json::value(state.last_latency_ms) : boost::json::value(nullptr);
  out["last_error"] = cause_or_null(state.last_error, audience);
  out["interval_ms"] = config.interval.count();
  out["tags"] = std::move(tags);
  boost::json::array depends_on;
  for (const auto& parent : config.depends_on) depends_on.emplace_back(parent);
  out["depends_on"] = std::move(depends_on);
  // Inside a maintenance window: when it ends (the pages show the state "maintenance").
  out["maintenance"] =
      view.maintenance_until
          ? boost::json::value(boost::json::object{{"until", format_rfc3339(*view.maintenance_until)}})
          : boost::json::value(nullptr);
  // Heartbeats only: when the next ping is due, for lists that show it.
  if (view.heartbeat) out["next_expected"] = time_or_null(view.heartbeat->next_expected);
  return out;
}

bool summary_has_secrets(const engine::MonitorView& view) {
  const auto* http = std::get_if<HttpCheckSpec>(&view.config->spec);
  const bool url_has_secrets = http != nullptr && redact_url(http->url) != http->url;
  return url_has_secrets || view.state.last_error.find(kBodyValueOpen) != std::string::npos;
}

boost::json::object check_result_json(const CheckResult& r, Audience audience) {
  boost::json::object out;
  out["at"] = format_rfc3339(r.at);
  out["ok"] = r.ok;
  out["latency_ms"] = r.latency_ms;
  out["cause"] = cause_or_null(r.cause, audience);
  if (r.http_status != 0) out["http_status"] = r.http_status;
  out["timings_ms"] = boost::json::object{{"dns", r.timings.dns_ms},
                                          {"connect", r.timings.connect_ms},
                                          {"tls", r.timings.tls_ms},
                                          {"first_byte", r.timings.first_byte_ms},
                                          {"total", r.timings.total_ms}};
  return out;
}

boost::json::object incident_json(const Incident& incident, Audience audience) {
  boost::json::object out;
  out["id"] = incident.id;
  out["monitor"] = incident.monitor;
  out["started"] = format_rfc3339(incident.started);
  out["ended"] = time_or_null(incident.ended);
  out["cause"] = cause_for(incident.cause, audience);
  // The monitor it depends on that was down when it opened (depends_on); null: its own.
  out["caused_by"] =
      incident.caused_by.empty() ? boost::json::value(nullptr) : boost::json::value(incident.caused_by);
  if (incident.ended) {
    out["duration_ms"] = std::chrono::duration_cast<Millis>(*incident.ended - incident.started).count();
  }
  return out;
}

boost::json::object ping_json(const PingRecord& r, Audience audience) {
  // A ping's body is the tail of a job's output (trainwatch run), and where it came from
  // names hosts and tools: only signed-in readers see them.
  const bool admin = audience != Audience::kPublic;
  boost::json::object out;
  if (r.id != 0) out["id"] = r.id;
  out["at"] = format_rfc3339(r.ping.at);
  out["kind"] = to_string(r.ping.kind);
  if (r.ping.kind == PingKind::kExitCode) out["exit_code"] = r.ping.exit_code;
  out["source"] = admin ? boost::json::value(r.ping.source) : boost::json::value(nullptr);
  out["user_agent"] = admin ? boost::json::value(r.ping.user_agent) : boost::json::value(nullptr);
  out["run_ms"] = r.run_ms ? boost::json::value(*r.run_ms) : boost::json::value(nullptr);
  if (r.id != 0) {
    out["body"] = admin ? boost::json::value(r.ping.body) : boost::json::value(nullptr);
    out["body_truncated"] = admin ? boost::json::value(r.ping.body_truncated) : boost::json::value(nullptr);
  }
  return out;
}

boost::json::object heartbeat_json(const engine::MonitorView& view, Audience audience) {
  const auto& spec = std::get<HeartbeatSpec>(view.config->spec);
  boost::json::object out;
  // A period monitor has period_ms and null schedule; a cron one 0 and its schedule.
  out["period_ms"] = spec.period.count();
  out["schedule"] = spec.schedule ? boost::json::value(spec.schedule->text) : boost::json::value(nullptr);
  out["tz"] = spec.schedule ? boost::json::value(spec.schedule->zone_name) : boost::json::value(nullptr);
  out["grace_ms"] = spec.grace.count();
  out["ping_body_limit"] = spec.ping_body_limit;
  out["last_ping"] = view.heartbeat && view.heartbeat->last_ping
                         ? boost::json::value(ping_json(*view.heartbeat->last_ping, audience))
                         : boost::json::value(nullptr);
  out["started"] = view.heartbeat ? time_or_null(view.heartbeat->open_start) : boost::json::value(nullptr);
  out["late"] = view.heartbeat && view.heartbeat->late;
  out["next_expected"] =
      view.heartbeat ? time_or_null(view.heartbeat->next_expected) : boost::json::value(nullptr);
  return out;
}

}  // namespace trainwatch::views
