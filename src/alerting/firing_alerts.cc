#include "alerting/firing_alerts.h"

#include <algorithm>

namespace trainwatch::alerting {

bool FiringAlerts::add(int64_t incident, AlertEvent event, SystemTime now, bool due_now) {
  auto it = alerts_.find(incident);
  if (it == alerts_.end() && alerts_.size() >= kMaxFiring) return false;
  const SystemTime due = due_now ? now : now + every_;
  if (it == alerts_.end()) {
    alerts_.emplace(incident, Alert{std::move(event), due});
  } else {
    it->second = Alert{std::move(event), due};
  }
  return true;
}

void FiringAlerts::forget(int64_t incident) { alerts_.erase(incident); }

std::vector<AlertEvent> FiringAlerts::take_due(SystemTime now, size_t max) {
  std::vector<Alert*> due;
  for (auto& [incident, alert] : alerts_) {
    if (alert.due <= now) due.push_back(&alert);
  }
  std::stable_sort(due.begin(), due.end(), [](const Alert* a, const Alert* b) { return a->due < b->due; });
  if (due.size() > max) due.resize(max);
  std::vector<AlertEvent> out;
  out.reserve(due.size());
  for (Alert* alert : due) {
    out.push_back(alert->event);
    alert->due = now + every_;
  }
  return out;
}

std::optional<SystemTime> FiringAlerts::next_due() const {
  std::optional<SystemTime> earliest;
  for (const auto& [incident, alert] : alerts_) {
    if (!earliest || alert.due < *earliest) earliest = alert.due;
  }
  return earliest;
}

}  // namespace trainwatch::alerting
