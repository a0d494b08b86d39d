#include "alerting/planner.h"

#include <algorithm>

#include "alerting/channels.h"
#include "alerting/dependency_rule.h"
#include "alerting/event.h"
#include "alerting/maintenance.h"
#include "alerting/providers/providers.h"
#include "auth/alert_link.h"
#include "config/monitor_target.h"
#include "core/duration.h"
#include "core/redaction.h"

namespace trainwatch::alerting {
namespace {

// The page that explains a monitor's alert, under server.public_url: a job's page for a
// job, the monitor's page otherwise (web/job_page.h, web/monitor_page.h).
std::string page_url(const std::string& public_url, const MonitorConfig& m) {
  if (public_url.empty()) return {};
  return public_url + (m.type == MonitorType::kJob ? "/jobs/" : "/monitors/") + m.name;
}

// Where an alert's links point: the server's public URL and the key its snooze link is
// signed with.
struct LinkBase {
  const std::string& public_url;
  const std::string& key;
};

// The link that snoozes the monitor, good for auth::kAlertLinkLife from the alert.
std::string snooze_url(const LinkBase& links, const AlertEvent& e) {
  if (links.public_url.empty() || links.key.empty()) return {};
  return links.public_url + "/snooze/" +
         auth::sign_alert_link(
             links.key, {e.monitor, e.incident_id,
                         std::chrono::time_point_cast<std::chrono::seconds>(e.at) + auth::kAlertLinkLife});
}

AlertEvent make_event(EventKind kind, const engine::AppliedResult& a, const Incident& incident,
                      const LinkBase& links) {
  AlertEvent e;
  e.kind = kind;
  e.monitor = a.monitor.name;
  e.monitor_type = std::string(to_string(a.monitor.type));
  e.target = describe_target(a.monitor, Audience::kPublic);  // the team's channels are wider than the admins
  e.tags = a.monitor.tags;
  e.incident_id = incident.id;
  // A recovery tells what it was down with; a DOWN or reminder what fails now. Alerts go
  // to the team, who need what the target answered: the admin's text, without marks.
  e.cause = cause_for(kind == EventKind::kUp || a.result.cause.empty() ? incident.cause : a.result.cause,
                      Audience::kAdmin);
  e.at = a.result.at;
  e.since = incident.started;
  e.ended = incident.ended;
  e.http_status = a.result.http_status;
  e.body_excerpt = a.result.body_excerpt;
  e.latency_ms = a.result.latency_ms;
  e.url = page_url(links.public_url, a.monitor);
  e.snooze_url = snooze_url(links, e);
  // A job's alert names the job and, failing, the culprit (jobs/culprit_labels.h); the
  // dispatcher keeps the labels a firing alert was sent with for its reminders and recovery.
  if (a.monitor.type == MonitorType::kJob) {
    e.labels.emplace_back("training_job", a.monitor.name);
    if (kind != EventKind::kUp)
      e.labels.insert(e.labels.end(), a.result.labels.begin(), a.result.labels.end());
  }
  // A heartbeat has no target to show (its token is a secret); say what it expects.
  if (const auto* hb = std::get_if<HeartbeatSpec>(&a.monitor.spec); hb && hb->schedule) {
    e.details.emplace_back("Expected on schedule", hb->schedule->text + " (" + hb->schedule->zone_name +
                                                       "), +" + format_duration(hb->grace) + " grace");
  } else if (hb != nullptr) {
    e.details.emplace_back("Expected every",
                           format_duration(hb->period) +
                               (hb->grace.count() > 0 ? " (+" + format_duration(hb->grace) + " grace)" : ""));
  }
  return e;
}

// The reminder due at `now` is the incident's k-th: k whole remind_every after its DOWN
// was due (started + notify_after), and it is due then. Every replica (and a restarted
// server) numbers an incident's reminders alike, so the store keeps one row per incident,
// channel and due time: a replica that takes a monitor back with its own reminder times
// from before (the one in between sent some) writes none twice (store.h, NewDelivery).
SystemTime reminder_due(const Incident& incident, const MonitorConfig& m, SystemTime now) {
  const SystemTime first = incident.started + m.notify_after;
  const auto every = std::chrono::duration_cast<SystemTime::duration>(*m.remind_every);
  if (now < first + every || every.count() <= 0) return now;
  return first + every * ((now - first) / every);
}

// Channels that page someone (providers.h): an alert there means "act now", so a warning
// stays out.
bool pages(const ChannelConfig& channel) { return pages_someone(channel.type); }

}  // namespace

AlertPlanner::AlertPlanner(const Clock& clock, std::function<void()> on_committed)
    : clock_(clock), on_committed_(std::move(on_committed)) {}

void AlertPlanner::configure(const Config& config, const std::vector<std::string>& usable) {
  std::lock_guard lock(mu_);
  notifications_ = config.notifications;
  usable_ = usable;
}

void AlertPlanner::set_public_url(std::string public_url) {
  std::lock_guard lock(mu_);
  public_url_ = std::move(public_url);
}

void AlertPlanner::set_alert_link_key(std::string key) {
  std::lock_guard lock(mu_);
  alert_link_key_ = std::move(key);
}

std::vector<std::string> AlertPlanner::channels_of(const MonitorConfig& m) const {
  std::vector<std::string> out;
  for (auto& name : channels_for(m, notifications_)) {
    if (std::find(usable_.begin(), usable_.end(), name) != usable_.end()) out.push_back(std::move(name));
  }
  return out;
}

std::vector<std::string> AlertPlanner::quiet_channels_of(const MonitorConfig& m) const {
  std::vector<std::string> out = channels_of(m);
  std::erase_if(out, [this](const std::string& name) {
    return std::any_of(notifications_.begin(), notifications_.end(),
                       [&](const ChannelConfig& c) { return c.name == name && pages(c); });
  });
  return out;
}

void AlertPlanner::set_maintenance(std::vector<MaintenanceWindow> windows) {
  std::lock_guard lock(mu_);
  maintenance_ = std::move(windows);
}

std::vector<NewDelivery> AlertPlanner::on_store_outage(SystemTime from, SystemTime to,
                                                       const std::string& why) {
  AlertEvent e;
  e.kind = EventKind::kWarning;
  e.monitor = std::string(kStoreAlertName);
  e.monitor_type = "store";
  e.cause =
      "the store could not take pings for " + format_duration(std::chrono::duration_cast<Millis>(to - from)) +
      " (" + why +
      "): pings were answered 503, or late, and every heartbeat's deadline moved by the outage, so none is "
      "DOWN for it; checks went on";
  e.at = to;
  e.since = from;
  e.ended = to;
  const std::string json = event_to_json(e);
  std::lock_guard lock(mu_);
  std::vector<NewDelivery> out;
  for (const ChannelConfig& c : notifications_) {
    if (pages(c) || std::find(usable_.begin(), usable_.end(), c.name) == usable_.end()) continue;
    out.push_back(NewDelivery{c.name, std::string(kStoreAlertName), std::nullopt,
                              std::string(to_string(EventKind::kWarning)), json, to, to});
  }
  return out;
}

std::vector<NewDelivery> AlertPlanner::on_apply(const engine::AppliedResult& a) {
  const MonitorConfig& m = a.monitor;
  // A spell of warnings ends with an ok result without one (a renewed certificate); a
  // failure in between (the server restarting) neither ends it nor warns again.
  if (a.result.ok && !a.result.warning && !warned_.empty()) warned_.erase(m.name);
  const bool warn = a.result.ok && a.result.warning && a.after.status == MonitorStatus::kUp && !a.opened &&
                    !a.closed && warned_.insert(m.name).second;
  // Most results open nothing, close nothing and remind of nothing: leave at once.
  const bool still_down = a.after.status == MonitorStatus::kDown && a.open;
  const bool may_remind = still_down && m.remind_every;
  const bool may_release = still_down && !a.open->caused_by.empty() && !a.cause_explained;
  if (!a.opened && !a.closed && !may_remind && !may_release && !warn) return {};
  std::lock_guard lock(mu_);
  const SystemTime now = clock_.system_time();
  const LinkBase links{public_url_, alert_link_key_};

  // A warning belongs to no incident, so no dependency rule applies to it.
  DependencyEffect effect = DependencyEffect::kNone;
  const Incident* incident = a.opened ? &*a.opened : (a.closed ? &*a.closed : (a.open ? &*a.open : nullptr));
  if (incident) {
    auto released = released_.find(m.name);
    const bool was_released = released != released_.end() && released->second == incident->id;
    effect = dependency_effect(*incident, a.closed.has_value(), a.cause_explained, was_released);
    if (a.closed) {
      next_reminder_.erase(m.name);
      if (released != released_.end()) released_.erase(released);
    }
    if (effect == DependencyEffect::kSuppress) return {};
  }

  std::optional<AlertEvent> event;
  SystemTime due = now;
  if (warn) {
    event = make_event(EventKind::kWarning, a, Incident{}, links);
    event->incident_id.reset();
    event->since.reset();
    event->ended.reset();
    event->snooze_url = snooze_url(links, *event);  // signed again without the incident
  } else if (effect == DependencyEffect::kRelease) {
    // Its parent is up again and it is not: from here on its incident is its own.
    released_[m.name] = incident->id;
    event = make_event(EventKind::kDown, a, *incident, links);
    event->details.emplace_back("Depends on", incident->caused_by + ", up again while this is still down");
    due = now + m.notify_after;
    if (m.remind_every) next_reminder_[m.name] = due + *m.remind_every;
  } else if (a.opened) {
    event = make_event(EventKind::kDown, a, *a.opened, links);
    due = now + m.notify_after;
    if (m.remind_every) next_reminder_[m.name] = due + *m.remind_every;
  } else if (a.closed) {
    event = make_event(EventKind::kUp, a, *a.closed, links);
  } else if (may_remind) {
    auto [next, inserted] = next_reminder_.emplace(m.name, now + *m.remind_every);
    if (!inserted && now >= next->second) {
      next->second = now + *m.remind_every;
      if (!held_until(maintenance_, a.monitor.name, a.monitor.tags, now)) {
        event = make_event(EventKind::kReminder, a, *a.open, links);
        due = reminder_due(*a.open, m, now);
      }
    }
  }
  if (!event) return {};
  const std::vector<std::string> channels = warn ? quiet_channels_of(m) : channels_of(m);
  if (channels.empty()) return {};
  const std::string json = event_to_json(*event);
  std::vector<NewDelivery> out;
  out.reserve(channels.size());
  for (const auto& channel : channels) {
    out.push_back(NewDelivery{channel, a.monitor.name, event->incident_id,
                              std::string(to_string(event->kind)), json, now, due});
  }
  return out;
}

}  // namespace trainwatch::alerting
