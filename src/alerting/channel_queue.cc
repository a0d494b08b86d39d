#include "alerting/channel_queue.h"

#include <algorithm>
#include <cassert>

#include "alerting/maintenance.h"

namespace trainwatch::alerting {

std::vector<QueuedDelivery> ChannelQueue::admit(QueuedDelivery item) {
  std::vector<QueuedDelivery> cancelled;
  const auto kind = event_kind_from_string(item.row.spec.kind).value_or(EventKind::kDown);
  if (kind == EventKind::kUp && item.row.spec.incident_id) {
    const int64_t incident = *item.row.spec.incident_id;
    bool down_held = false;
    // Held reminders of the incident go too, whether or not its DOWN went out: they
    // would remind of something already over.
    for (auto it = held_.begin(); it != held_.end();) {
      if (it->row.spec.incident_id == incident) {
        down_held = down_held || it->row.spec.kind == "down";
        it->row.last_error = "cancelled: recovered before the alert was released";
        cancelled.push_back(std::move(*it));
        it = held_.erase(it);
      } else {
        ++it;
      }
    }
    if (down_held) {
      item.row.last_error = "cancelled: the DOWN alert was never released";
      cancelled.push_back(std::move(item));
      return cancelled;
    }
  }
  item.release_at = item.row.attempts > 0 ? SystemTime{} : item.row.spec.due;
  held_.push_back(std::move(item));
  return cancelled;
}

void ChannelQueue::release_due(SystemTime now, const std::vector<MaintenanceWindow>& maintenance) {
  std::stable_sort(held_.begin(), held_.end(), [](const QueuedDelivery& a, const QueuedDelivery& b) {
    return a.release_at != b.release_at ? a.release_at < b.release_at : a.row.id < b.row.id;
  });
  std::vector<QueuedDelivery> still_held;
  for (auto& item : held_) {
    if (item.release_at > now) {
      still_held.push_back(std::move(item));
      continue;
    }
    if (item.row.attempts == 0) {
      if (auto until = held_until(maintenance, item.event.monitor, item.event.tags, now)) {
        item.release_at = *until;
        still_held.push_back(std::move(item));
        continue;
      }
    }
    ready_.push_back(std::move(item));
  }
  held_ = std::move(still_held);
}

void ChannelQueue::recheck_held(SystemTime now) {
  for (auto& item : held_) item.release_at = now;
}

std::optional<SystemTime> ChannelQueue::next_release() const {
  if (held_.empty()) return std::nullopt;
  SystemTime earliest = held_.front().release_at;
  for (const auto& item : held_) earliest = std::min(earliest, item.release_at);
  return earliest;
}

ChannelQueue::Next ChannelQueue::next(SystemTime now) const {
  if (sending_) return {Next::Kind::kBusy, {}};
  if (ready_.empty()) return {Next::Kind::kIdle, {}};
  const auto& retry = ready_.front().row.next_attempt;
  if (retry && *retry > now) return {Next::Kind::kWait, *retry};
  return {Next::Kind::kSend, {}};
}

QueuedDelivery& ChannelQueue::start_send() {
  assert(!sending_ && !ready_.empty());
  sending_ = true;
  return ready_.front();
}

QueuedDelivery* ChannelQueue::in_flight(int64_t id) {
  if (!sending_ || ready_.empty() || ready_.front().row.id != id) return nullptr;
  return &ready_.front();
}

void ChannelQueue::end_send(bool done) {
  sending_ = false;
  if (done && !ready_.empty()) ready_.pop_front();
}

}  // namespace trainwatch::alerting
