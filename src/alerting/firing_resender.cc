#include "alerting/firing_resender.h"

#include <algorithm>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "alerting/attempt_outcome.h"
#include "alerting/event.h"
#include "alerting/message.h"
#include "alerting/retry_policy.h"
#include "core/duration.h"

namespace trainwatch::alerting {

FiringResender::FiringResender(const Clock& clock, TimerFactory& timers, Store& store, Sender& sender,
                               std::function<void()> slot_free)
    : clock_(clock),
      store_(store),
      sender_(sender),
      slot_free_(std::move(slot_free)),
      timer_(timers.make_timer()) {}

void FiringResender::adopt(const Channel& channel) {
  name_ = channel.name;
  const Resender* resender = channel.provider->resender();
  if (resender == nullptr) {
    firing_.reset();
    timer_->cancel();
    return;
  }
  if (firing_) {
    firing_->set_every(resender->resend_every());
    return;
  }
  firing_.emplace(resender->resend_every());
  restore(channel);
}

// Rebuilds what the channel keeps firing from the store: for each open incident, the
// newest DOWN or reminder of it that this channel delivered. Each is re-sent at once, as
// nobody knows how long ago it last went out. On a read error the channel starts with
// what it read; the alerts it missed lapse at their endsAt.
void FiringResender::restore(const Channel& channel) {
  // Deliveries of one monitor on this channel read back to find its open incident's
  // alert: enough for one incident's DOWN and its latest reminders.
  constexpr int kRowsReadPerMonitor = 20;
  auto states = store_.load_states();
  if (!states) {
    spdlog::warn("notifications: channel {}: cannot read which incidents are open: {}", channel.name,
                 states.error().message);
    return;
  }
  const SystemTime now = clock_.system_time();
  for (const auto& stored : *states) {
    const auto incident = stored.state.open_incident_id;
    if (!incident || !still_open(*incident)) continue;
    auto rows = store_.deliveries(DeliveryQuery{channel.name, stored.monitor, DeliveryStatus::kDelivered,
                                                std::nullopt, std::nullopt, kRowsReadPerMonitor});
    if (!rows) continue;
    for (const auto& row : *rows) {  // newest first
      if (row.spec.incident_id != incident || (row.spec.kind != "down" && row.spec.kind != "reminder"))
        continue;
      if (auto event = event_from_json(row.spec.event)) firing_->add(*incident, std::move(*event), now, true);
      break;
    }
  }
  if (firing_->size() > 0) {
    spdlog::info("notifications: channel {} keeps {} alerts firing", channel.name, firing_->size());
  }
}

// Whether the store still holds `incident` open. A read error counts as open: one more
// re-send of an alert does less harm than letting an ongoing incident lapse.
bool FiringResender::still_open(int64_t incident) {
  auto found = store_.incident(incident);
  if (!found) return true;
  return found->has_value() && !(*found)->ended;
}

void FiringResender::note_loaded(QueuedDelivery& item) {
  if (!firing_ || !item.row.spec.incident_id) return;
  const int64_t incident = *item.row.spec.incident_id;
  if (item.event.kind == EventKind::kUp || item.event.kind == EventKind::kReminder) {
    if (const AlertEvent* fired = firing_->find(incident)) item.event.labels = fired->labels;
  }
  // The incident is over: its recovery resolves the alert; re-sending it would not.
  if (item.event.kind == EventKind::kUp) firing_->forget(incident);
}

void FiringResender::note_delivered(const QueuedDelivery& item, SystemTime now) {
  if (!firing_ || !item.row.spec.incident_id) return;
  const int64_t incident = *item.row.spec.incident_id;
  if (item.event.kind == EventKind::kDown || item.event.kind == EventKind::kReminder) {
    if (!firing_->add(incident, item.event, now)) {
      spdlog::warn(
          "notifications: channel {}: {} alerts fire already; incident {} is not re-sent and lapses at "
          "its endsAt",
          name_, FiringAlerts::kMaxFiring, incident);
    }
  } else if (item.event.kind == EventKind::kUp) {
    firing_->forget(incident);
  }
}

void FiringResender::resend(const Channel& channel) {
  timer_->cancel();
  if (!firing_) return;
  const SystemTime now = clock_.system_time();
  std::vector<std::pair<AlertEvent, Message>> alerts;
  for (auto& event : firing_->take_due(now, kMaxResendBatch)) {
    // Closed without a recovery on this channel: its monitor was deleted (or the recovery
    // was written but not read yet, and resolves it itself).
    if (!event.incident_id || !still_open(*event.incident_id)) {
      if (event.incident_id) firing_->forget(*event.incident_id);
      continue;
    }
    Message message = render_message(event, now);
    alerts.emplace_back(std::move(event), std::move(message));
  }
  if (alerts.empty()) {
    if (auto at = firing_->next_due())
      timer_->arm_after(clock_, delay_until(*at, now), [this] { slot_free_(); });
    return;
  }
  const Resender& resender = *channel.provider->resender();
  OutboundRequest request = resender.build_resend(alerts, now);
  if (request.body.size() > kMaxRequestBytes && alerts.size() > 1) {
    // Too much for one request: this one carries the first alert, the rest are due again
    // at once and go in the next ones.
    for (size_t i = 1; i < alerts.size(); ++i) {
      firing_->add(*alerts[i].first.incident_id, std::move(alerts[i].first), now, true);
    }
    alerts.resize(1);
    request = resender.build_resend(alerts, now);
  }
  if (request.body.size() > kMaxRequestBytes) {
    spdlog::warn("notifications: channel {}: the re-send of incident {} is over 256 KiB and is not sent",
                 channel.name, *alerts.front().first.incident_id);
    slot_free_();
    return;
  }
  request.timeout = channel.timeout;
  in_flight_ = true;
  sender_.send(request,
               [this, alive = std::weak_ptr<int>(alive_), name = channel.name](const SendOutcome& o) {
                 if (!alive.expired()) on_resent(name, o);
               });
}

void FiringResender::on_resent(const std::string& channel, const SendOutcome& o) {
  in_flight_ = false;
  const bool ok = judge_attempt(o.transport_ok, o.permanent, o.status) == AttemptVerdict::kDelivered;
  if (!ok && !failing_) {
    spdlog::warn(
        "notifications: channel {}: re-sending firing alerts failed ({}); each stays firing until its "
        "endsAt and is re-sent again every {}",
        channel, o.error, format_duration(firing_ ? firing_->every() : Millis(0)));
  } else if (ok && failing_) {
    spdlog::info("notifications: channel {} re-sends firing alerts again", channel);
  }
  failing_ = !ok;
  slot_free_();
}

void FiringResender::stop() { timer_->cancel(); }

}  // namespace trainwatch::alerting
