// ChannelQueue: one channel's deliveries and the order in which they leave. Pure: no
// I/O, no timers, no store; the dispatcher feeds it outbox rows and the time, and does
// what it answers.
//
// Two parts:
//  - held: rows read but not released yet: not due (notify_after), or their monitor is
//    in a maintenance window. They are released in (release time, id) order.
//  - ready: a FIFO of released rows. Only its front is sent, one request at a time, so a
//    channel's messages arrive in release order (a DOWN before its recovery); a front
//    waiting for its retry holds up this channel and no other.
//
// Flap damping, worked through: a monitor goes down at 12:00 with notify_after 5m, so its
// DOWN (incident 7) is due 12:05. It recovers at 12:02: the recovery of incident 7 is
// admitted while that DOWN is still held, so both are cancelled and nothing is sent. Had
// it recovered at 12:06, the DOWN would have been released at 12:05 and the recovery
// would follow it.
//
// Threading: none of its own; the dispatcher uses each queue on its thread only.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "alerting/event.h"
#include "config/notifications.h"
#include "core/clock.h"
#include "storage/store.h"

namespace trainwatch::alerting {

struct QueuedDelivery {
  Delivery row;
  AlertEvent event;              // the row's event, decoded
  SystemTime release_at{};       // while held: when to look at it again
  bool affected_listed = false;  // event.affected filled in (at its first attempt)
};

class ChannelQueue {
 public:
  struct Next {
    enum class Kind {
      kIdle,  // nothing released
      kBusy,  // the front is in flight
      kWait,  // the front waits for its retry, due `at`
      kSend,  // send the front now (start_send)
    };
    Kind kind = Kind::kIdle;
    SystemTime at{};
  };

  // Takes a row read from the outbox into `held`. A recovery that finds the DOWN of its
  // incident still held cancels every held row of that incident and itself: those are
  // returned, their reason in last_error, for the caller to close as cancelled. A row
  // attempted before a restart had been released then: it is due at once.
  std::vector<QueuedDelivery> admit(QueuedDelivery item);

  // Releases every held row due at `now` whose monitor no window holds, in (release
  // time, id) order. A row that a window holds is looked at again when the window ends;
  // a row already attempted is not held by maintenance (it was released before).
  void release_due(SystemTime now, const std::vector<MaintenanceWindow>& maintenance);
  // Makes every held row due at `now`, to be judged again under changed windows.
  void recheck_held(SystemTime now);
  // When the earliest held row is to be looked at again; nullopt when nothing is held.
  std::optional<SystemTime> next_release() const;

  Next next(SystemTime now) const;
  // Marks the front in flight and returns it. Only after next() answered kSend.
  QueuedDelivery& start_send();
  // The front, when it is in flight and is row `id`; nullptr for an answer no longer awaited.
  QueuedDelivery* in_flight(int64_t id);
  // The front's answer came: `done` removes it; otherwise it stays first, for its retry.
  void end_send(bool done);

  bool sending() const { return sending_; }
  size_t ready() const { return ready_.size(); }
  size_t held() const { return held_.size(); }
  size_t loaded() const { return ready_.size() + held_.size(); }

 private:
  std::deque<QueuedDelivery> ready_;  // the front is in flight or waits for its retry
  std::vector<QueuedDelivery> held_;
  bool sending_ = false;
};

}  // namespace trainwatch::alerting
