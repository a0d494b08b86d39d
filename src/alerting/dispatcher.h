// Dispatcher: delivers the outbox. Every row of `deliveries` that is pending is sent to
// its channel, retried with backoff until it is delivered, rejected (4xx other than
// 408/429) or given up (24 h), and its outcome written back. It is the I/O shell around
// pure parts: ChannelQueue (channel_queue.h) decides what leaves when, attempt_outcome.h
// what an answer does to a row, ChannelHealth (channel_health.h) what is shown of it.
//
// Per channel: one FIFO of released deliveries with ONE request in flight, so a
// channel's messages arrive in order (a DOWN before its recovery), and a slow or dead
// channel only ever holds up its own queue: channels never wait for each other. The
// deliveries not yet due (notify_after) or in a maintenance window wait in the channel's
// held set and are released in due order; a recovery whose DOWN was never released
// cancels both (flap damping: nothing is sent).
//
// Waiting: only through the TimerFactory given (a hold timer and a retry timer per
// channel); requests go out only through the Sender given. In serve these are AsioTimers
// and the Transport on the dispatcher's io_context.
//
// Durability: rows are written by the engine in the same transaction as the state change
// (RecordResult.outbox). The dispatcher reads pending rows in id order per channel,
// after a wake() (the commit callback) and at start. A restart therefore re-sends exactly
// the rows still pending: never attempted, waiting for a retry, or in flight when the
// process died (at-least-once). Replicas on one PostgreSQL claim the rows they read
// (claim_as): each row is sent by one live replica, and a dead one's by another once it
// is dropped from the members table; the server wakes the dispatcher at every beat.
//
// Bounds: at most kMaxLoadedPerChannel deliveries per channel in memory (the rest stay in
// the database and are read as the queue drains); one request in flight per channel plus
// kMaxTestsInFlight test sends (more answer "busy"); request bodies kMaxRequestBytes,
// response bodies Transport::kMaxResponseBytes; every request has its channel's timeout.
//
// Re-sends (channels whose provider is a Resender: Alertmanager): each channel's
// FiringResender (firing_resender.h) re-sends the alerts it delivered as firing while their
// incident is open, through the channel's one request slot when no outbox row is ready to
// go, so a recovery is never overtaken by a re-send of what it resolves. They are no
// outbox rows and are not retried.
//
// Reconfiguring (SIGHUP): a channel kept by name keeps its queue, counters and any
// request in flight, and sends the next one with its new settings; a new channel loads its
// pending rows; a removed channel's rows stay pending in the store, sent if it comes back.
//
// Threading: all work runs on the io_context given to the constructor, which must also
// drive the timers and the sender (run it on one thread of its own: the engine's thread
// never waits for a delivery). wake(), test(), set_maintenance() and reconfigure() may be
// called from any thread; health() copies under a mutex. The sender must outlive the
// dispatcher or be destroyed with its io_context stopped; an answer that comes after the
// dispatcher is gone is ignored.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "alerting/channel_health.h"
#include "alerting/channel_queue.h"
#include "alerting/channels.h"
#include "alerting/retry_policy.h"
#include "alerting/sender.h"
#include "core/clock.h"
#include "core/timer.h"
#include "storage/store.h"

namespace trainwatch::alerting {

struct TestOutcome {
  bool ok = false;
  int status = 0;
  std::string error;  // "no channel named 'x'", "busy", or the delivery error
  double latency_ms = 0;
  // What it came to, one of a few fixed phrases with nothing of the receiver's answer or
  // the channel's target in it: all an editor reads of a test (test_reason::).
  std::string_view reason;
};

// The phrases of TestOutcome::reason.
namespace test_reason {
inline constexpr std::string_view kDelivered = "delivered";
inline constexpr std::string_view kRefused = "the receiver refused it";
inline constexpr std::string_view kUnreachable = "the receiver could not be reached";
inline constexpr std::string_view kOnThisHost = "not sent: the target is on this host";
inline constexpr std::string_view kBusy = "not sent: too many tests in flight";
inline constexpr std::string_view kNoChannel = "not sent: no such channel";
}  // namespace test_reason

class Dispatcher {
 public:
  static constexpr size_t kMaxLoadedPerChannel = 2000;
  static constexpr size_t kMaxTestsInFlight = 4;

  using RandomUnit = std::function<double()>;  // uniform in [0, 1]: the backoff's jitter

  Dispatcher(boost::asio::io_context& io, const Clock& clock, TimerFactory& timers, Store& store,
             Sender& sender, RandomUnit random, RetryPolicy policy = {});
  ~Dispatcher();

  // Names the monitors that depend on a monitor and are down now (Engine::down_dependents):
  // a monitor's alert lists them, as of its first attempt. Set once, before start(); called
  // on the dispatcher's thread.
  using AffectedLookup = std::function<std::vector<std::string>(const std::string& monitor)>;
  void list_affected_with(AffectedLookup lookup) { affected_ = std::move(lookup); }

  // Replicas on one PostgreSQL: this dispatcher claims the rows it sends as `claimer`
  // (the replica's member id), and takes over those of a replica silent for `ttl`
  // (Store::claim_deliveries). Call before start(); a lone server claims nothing.
  void claim_as(std::string claimer, Millis ttl) {
    claimer_ = std::move(claimer);
    claimer_ttl_ = ttl;
  }

  // Takes the channels and loads what is pending. Call once, before the io_context runs.
  Status start(std::vector<Channel> channels, std::vector<MaintenanceWindow> maintenance);

  // New outbox rows were committed: read them. Cheap and coalesced; any thread.
  void wake();
  void set_maintenance(std::vector<MaintenanceWindow> maintenance);
  // Replaces the channel list (see the top of this file), on the dispatcher's thread.
  void reconfigure(std::vector<Channel> channels);
  // Sends a test message to `channel` now, bypassing the outbox; `done` runs on the
  // dispatcher's thread.
  void test(const std::string& channel, std::function<void(TestOutcome)> done);
  // Cancels every timer; requests in flight are abandoned (and re-sent after a restart).
  void stop();

  std::vector<ChannelHealth> health() const;

  // Whether reading (claiming) the outbox fails, for /healthz: for how long the longest
  // failing channel has failed, and why; nullopt while every read works. A failed read is
  // tried again every kOutboxRetry until one works.
  struct OutboxTrouble {
    Millis failing_for{0};
    std::string error;
  };
  std::optional<OutboxTrouble> outbox_trouble() const;
  static constexpr Millis kOutboxRetry{1'000};

 private:
  struct ChannelState;

  void describe(ChannelState& ch);  // its health's name, type, target (call with mu_ held)
  Status load(ChannelState& ch);
  // After each read of the outbox: `failure` null when it worked.
  void note_outbox_read(ChannelState& ch, const Error* failure);
  void release_due(ChannelState& ch);
  void pump(ChannelState& ch);
  void send(ChannelState& ch);
  void on_sent(const std::string& channel, int64_t id, const SendOutcome& outcome);
  void close(ChannelState& ch, QueuedDelivery& item, DeliveryStatus status, std::string reason);
  void record(const Delivery& row);
  void show_sizes(ChannelState& ch);

  boost::asio::io_context& io_;
  const Clock& clock_;
  TimerFactory& timers_;
  Store& store_;
  Sender& sender_;
  RandomUnit random_;
  RetryPolicy policy_;
  std::string claimer_;  // empty: one process sends everything
  Millis claimer_ttl_{0};
  AffectedLookup affected_;
  std::vector<MaintenanceWindow> maintenance_;                     // io thread only
  std::map<std::string, std::unique_ptr<ChannelState>> channels_;  // io thread; replaced under mu_
  std::atomic<bool> wake_posted_{false};
  size_t tests_in_flight_ = 0;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);

  mutable std::mutex mu_;  // guards each ChannelState's `health` and `outbox_*`
};

}  // namespace trainwatch::alerting
