#include "alerting/planner.h"

#include <algorithm>

#include "alerting/channels.h"
#include "alerting/event.h"
#include "alerting/maintenance.h"
#include "core/duration.h"

namespace trainwatch::alerting {
namespace {

std::string target_of(const MonitorConfig& m) {
  if (const auto* http = std::get_if<HttpCheckSpec>(&m.spec)) return http->url;
  if (const auto* tcp = std::get_if<TcpCheckSpec>(&m.spec)) return tcp->host + ":" + std::to_string(tcp->port);
  return "";
}

AlertEvent make_event(EventKind kind, const AppliedResult& a, const Incident& incident) {
  AlertEvent e;
  e.kind = kind;
  e.monitor = a.monitor.name;
  e.monitor_type = std::string(to_string(a.monitor.type));
  e.target = target_of(a.monitor);
  e.tags = a.monitor.tags;
  e.incident_id = incident.id;
  // A recovery tells what it was down with; a DOWN or reminder what fails now.
  e.cause = kind == EventKind::kUp || a.result.cause.empty() ? incident.cause : a.result.cause;
  e.at = a.result.at;
  e.since = incident.started;
  e.ended = incident.ended;
  e.http_status = a.result.http_status;
  e.body_excerpt = a.result.body_excerpt;
  e.latency_ms = a.result.latency_ms;
  // A heartbeat has no target to show (its token is a secret); say what it expects.
  if (const auto* hb = std::get_if<HeartbeatSpec>(&a.monitor.spec)) {
    e.details.emplace_back("Expected every", format_duration(hb->period) +
                                                 (hb->grace.count() > 0 ? " (+" + format_duration(hb->grace) + " grace)" : ""));
  }
  return e;
}

}  // namespace

AlertPlanner::AlertPlanner(const Clock& clock, std::function<void()> on_committed)
    : clock_(clock), on_committed_(std::move(on_committed)) {}

void AlertPlanner::configure(const Config& config, const std::vector<std::string>& usable) {
  std::map<std::string, Settings> monitors;
  for (const auto& m : config.monitors) {
    Settings s;
    for (auto& name : channels_for(m, config.notifications)) {
      if (std::find(usable.begin(), usable.end(), name) != usable.end()) s.channels.push_back(std::move(name));
    }
    s.notify_after = m.notify_after;
    s.remind_every = m.remind_every;
    monitors[m.name] = std::move(s);
  }
  std::lock_guard lock(mu_);
  monitors_ = std::move(monitors);
}

void AlertPlanner::set_maintenance(std::vector<MaintenanceWindow> windows) {
  std::lock_guard lock(mu_);
  maintenance_ = std::move(windows);
}

std::vector<NewDelivery> AlertPlanner::on_apply(const AppliedResult& a) {
  std::lock_guard lock(mu_);
  auto it = monitors_.find(a.monitor.name);
  if (it == monitors_.end() || it->second.channels.empty()) return {};
  const Settings& s = it->second;
  const SystemTime now = clock_.system_time();

  std::optional<AlertEvent> event;
  SystemTime due = now;
  if (a.opened) {
    event = make_event(EventKind::kDown, a, *a.opened);
    due = now + s.notify_after;
    if (s.remind_every) next_reminder_[a.monitor.name] = due + *s.remind_every;
  } else if (a.closed) {
    event = make_event(EventKind::kUp, a, *a.closed);
    next_reminder_.erase(a.monitor.name);
  } else if (a.after.status == MonitorStatus::kDown && a.open && s.remind_every) {
    auto [next, inserted] = next_reminder_.emplace(a.monitor.name, now + *s.remind_every);
    if (!inserted && now >= next->second) {
      next->second = now + *s.remind_every;
      if (!held_until(maintenance_, a.monitor.name, a.monitor.tags, now)) {
        event = make_event(EventKind::kReminder, a, *a.open);
      }
    }
  }
  if (!event) return {};
  const std::string json = event_to_json(*event);
  std::vector<NewDelivery> out;
  out.reserve(s.channels.size());
  for (const auto& channel : s.channels) {
    out.push_back(NewDelivery{channel, a.monitor.name, event->incident_id, std::string(to_string(event->kind)), json,
                              now, due});
  }
  return out;
}

}  // namespace trainwatch::alerting
