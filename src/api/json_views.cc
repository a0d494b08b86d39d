#include "api/json_views.h"

#include "core/time_format.h"

namespace trainwatch::api {
namespace {

boost::json::value time_or_null(const std::optional<SystemTime>& t) {
  if (!t) return nullptr;
  return boost::json::string(format_rfc3339(*t));
}

std::string target_of(const MonitorConfig& config) {
  if (const auto* http = std::get_if<HttpCheckSpec>(&config.spec)) return http->url;
  // The token is a secret (whoever has it can ping): lists show only its start.
  if (const auto* hb = std::get_if<HeartbeatSpec>(&config.spec)) return "/ping/" + hb->token.substr(0, 4) + "\u2026";
  if (std::holds_alternative<JobCheckSpec>(config.spec)) return "/api/v1/jobs/" + config.name;
  const auto& tcp = std::get<TcpCheckSpec>(config.spec);
  return tcp.host + ":" + std::to_string(tcp.port);
}

}  // namespace

boost::json::object monitor_summary(const MonitorView& view) {
  const MonitorConfig& config = *view.config;
  const MonitorState& state = view.state;
  boost::json::array tags;
  for (const auto& tag : config.tags) tags.emplace_back(tag);
  boost::json::object out;
  out["name"] = config.name;
  out["type"] = to_string(config.type);
  out["target"] = target_of(config);
  out["status"] = to_string(state.status);
  out["since"] = format_rfc3339(state.since);
  out["last_check"] = time_or_null(state.last_check);
  out["last_latency_ms"] = state.last_check ? boost::json::value(state.last_latency_ms) : boost::json::value(nullptr);
  out["last_error"] = state.last_error.empty() ? boost::json::value(nullptr) : boost::json::value(state.last_error);
  out["interval_ms"] = config.interval.count();
  out["tags"] = std::move(tags);
  return out;
}

boost::json::object check_result_json(const CheckResult& r) {
  boost::json::object out;
  out["at"] = format_rfc3339(r.at);
  out["ok"] = r.ok;
  out["latency_ms"] = r.latency_ms;
  out["cause"] = r.cause.empty() ? boost::json::value(nullptr) : boost::json::value(r.cause);
  if (r.http_status != 0) out["http_status"] = r.http_status;
  out["timings_ms"] = boost::json::object{{"dns", r.timings.dns_ms},
                                          {"connect", r.timings.connect_ms},
                                          {"tls", r.timings.tls_ms},
                                          {"first_byte", r.timings.first_byte_ms},
                                          {"total", r.timings.total_ms}};
  return out;
}

boost::json::object incident_json(const Incident& incident) {
  boost::json::object out;
  out["id"] = incident.id;
  out["monitor"] = incident.monitor;
  out["started"] = format_rfc3339(incident.started);
  out["ended"] = time_or_null(incident.ended);
  out["cause"] = incident.cause;
  if (incident.ended) {
    out["duration_ms"] = std::chrono::duration_cast<Millis>(*incident.ended - incident.started).count();
  }
  return out;
}

boost::json::object ping_json(const PingRecord& r) {
  boost::json::object out;
  if (r.id != 0) out["id"] = r.id;
  out["at"] = format_rfc3339(r.ping.at);
  out["kind"] = to_string(r.ping.kind);
  if (r.ping.kind == PingKind::kExitCode) out["exit_code"] = r.ping.exit_code;
  out["source"] = r.ping.source;
  out["user_agent"] = r.ping.user_agent;
  out["run_ms"] = r.run_ms ? boost::json::value(*r.run_ms) : boost::json::value(nullptr);
  if (r.id != 0) {
    out["body"] = r.ping.body;
    out["body_truncated"] = r.ping.body_truncated;
  }
  return out;
}

boost::json::object heartbeat_json(const MonitorView& view) {
  const auto& spec = std::get<HeartbeatSpec>(view.config->spec);
  boost::json::object out;
  out["period_ms"] = spec.period.count();
  out["grace_ms"] = spec.grace.count();
  out["ping_body_limit"] = spec.ping_body_limit;
  out["last_ping"] = view.heartbeat && view.heartbeat->last_ping ? boost::json::value(ping_json(*view.heartbeat->last_ping))
                                                                  : boost::json::value(nullptr);
  out["started"] = view.heartbeat ? time_or_null(view.heartbeat->open_start) : boost::json::value(nullptr);
  out["late"] = view.heartbeat && view.heartbeat->late;
  return out;
}

}  // namespace trainwatch::api
