// FiringResender: one channel's re-sends of the alerts it delivered as firing, for a
// channel whose provider is a Resender (Alertmanager, provider.h). The dispatcher owns one
// per channel, tells it what the channel read from and delivered of its outbox, and lends
// it the channel's one request slot when no outbox row is ready to go; it is the I/O shell
// around FiringAlerts (firing_alerts.h), which decides what is due when.
//
// What it does: every DOWN or reminder the channel delivered is re-sent each resend_every
// while its incident is open, batched (kMaxResendBatch), through the channel's slot, so a
// recovery is never overtaken by a re-send of what it resolves. Re-sends stop when the
// channel reads the incident's recovery from the outbox (note_loaded), or finds the
// incident closed in the store before a re-send (its monitor deleted: no recovery is sent,
// the alert lapses at its endsAt). They are no outbox rows (no API row, no other channel
// hears of them) and are not retried: the next period's re-send is. After a restart they
// are rebuilt from the store (the open incidents' delivered DOWNs and reminders) and
// re-sent at once. A maintenance window does not stop them: the alert was delivered before
// it, and letting it lapse would hide the incident after the window.
//
// The slot: while a re-send is in flight (in_flight()) the dispatcher sends nothing else
// on the channel; when its answer comes, or the next re-send falls due, `slot_free` runs
// and the dispatcher pumps the channel again, which calls resend() when the outbox has
// nothing ready.
//
// Threading: none of its own; everything runs on the dispatcher's thread, which drives the
// timers and the sender given. An answer that comes after it is destroyed (its channel was
// removed by a reload, or the dispatcher is gone) is ignored; its timer dies with it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "alerting/channel_queue.h"
#include "alerting/channels.h"
#include "alerting/firing_alerts.h"
#include "alerting/sender.h"
#include "core/clock.h"
#include "core/timer.h"
#include "storage/store.h"

namespace trainwatch::alerting {

class FiringResender {
 public:
  FiringResender(const Clock& clock, TimerFactory& timers, Store& store, Sender& sender,
                 std::function<void()> slot_free);
  FiringResender(const FiringResender&) = delete;
  FiringResender& operator=(const FiringResender&) = delete;

  // After the channel was (re)set: starts re-sending when its provider is a Resender
  // (rebuilding what fires from the store), takes a new resend_every, or stops when the
  // provider no longer re-sends.
  void adopt(const Channel& channel);

  // A re-send holds the channel's one request slot until its answer comes.
  bool in_flight() const { return in_flight_; }

  // A stored delivery was read into the channel's queue: a reminder or recovery takes the
  // labels its alert fired with (or the receiver would take it for another alert), and a
  // recovery ends its alert's re-sends.
  void note_loaded(QueuedDelivery& item);
  // A delivery of the channel was delivered: a DOWN or reminder fires from now on, a
  // recovery ends its alert's re-sends.
  void note_delivered(const QueuedDelivery& item, SystemTime now);

  // The slot is free of outbox rows: re-sends what is due, or waits until it is.
  void resend(const Channel& channel);

  // Cancels the timer; a re-send in flight is abandoned.
  void stop();

 private:
  void restore(const Channel& channel);
  bool still_open(int64_t incident);
  void on_resent(const std::string& channel, const SendOutcome& outcome);

  const Clock& clock_;
  Store& store_;
  Sender& sender_;
  std::function<void()> slot_free_;
  std::string name_;                    // the channel's, for the log
  std::optional<FiringAlerts> firing_;  // only while the provider re-sends
  std::unique_ptr<Timer> timer_;        // the next firing alert's re-send
  bool in_flight_ = false;              // a re-send holds the slot
  bool failing_ = false;                // one log line when re-sends start and stop failing
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
};

}  // namespace trainwatch::alerting
