#include "alerting/dispatcher.h"

#include <algorithm>

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

#include "alerting/attempt_outcome.h"
#include "alerting/event.h"
#include "alerting/firing_resender.h"
#include "alerting/message.h"
#include "core/duration.h"

namespace trainwatch::alerting {

namespace asio = boost::asio;

struct Dispatcher::ChannelState {
  explicit ChannelState(Dispatcher& d)
      : retry_timer(d.timers_.make_timer()),
        hold_timer(d.timers_.make_timer()),
        reload_timer(d.timers_.make_timer()),
        resender(d.clock_, d.timers_, d.store_, d.sender_, [&d, this] { d.pump(*this); }) {}

  Channel channel;
  // io thread only.
  ChannelQueue queue;
  int64_t cursor = 0;       // the highest id read from the store
  bool claimed = false;     // rows were claimed for it since it was made (claims: the store's own first)
  bool maybe_more = false;  // the store may hold pending rows past the cursor
  // Destroyed with the channel, so neither fires into a removed channel (timer.h).
  std::unique_ptr<Timer> retry_timer;  // the front's next attempt
  std::unique_ptr<Timer> hold_timer;   // the earliest held row's release
  // After a read of the outbox failed: the next one, kOutboxRetry later (no commit may
  // come to wake the dispatcher, and /healthz must not say the outbox fails once it works).
  std::unique_ptr<Timer> reload_timer;
  // Re-sends what the channel delivered as firing, when its provider asks for it; its
  // timer dies with the channel too.
  FiringResender resender;
  // Under mu_.
  ChannelHealth health;
  std::optional<MonoTime> outbox_failing_since;  // reads of its outbox fail since then
  std::string outbox_error;                      // the last failure's message
};

Dispatcher::Dispatcher(asio::io_context& io, const Clock& clock, TimerFactory& timers, Store& store,
                       Sender& sender, RandomUnit random, RetryPolicy policy)
    : io_(io),
      clock_(clock),
      timers_(timers),
      store_(store),
      sender_(sender),
      random_(std::move(random)),
      policy_(policy) {}

Dispatcher::~Dispatcher() { stop(); }

void Dispatcher::describe(ChannelState& ch) {
  ch.health.name = ch.channel.name;
  ch.health.type = ch.channel.type;
  ch.health.target = ch.channel.provider->target();
  ch.health.is_default = ch.channel.is_default;
}

Status Dispatcher::start(std::vector<Channel> channels, std::vector<MaintenanceWindow> maintenance) {
  maintenance_ = std::move(maintenance);
  for (auto& c : channels) {
    auto state = std::make_unique<ChannelState>(*this);
    state->channel = std::move(c);
    describe(*state);
    state->resender.adopt(state->channel);
    channels_[state->channel.name] = std::move(state);
  }
  // Pending rows of a channel no longer configured stay pending (and are sent if the
  // channel comes back); they are not loaded.
  for (auto& [name, ch] : channels_) {
    if (auto loaded = load(*ch); !loaded) return loaded;
    if (ch->queue.loaded() > 0) {
      spdlog::info("notifications: channel {} resumes {} pending deliveries", name, ch->queue.loaded());
    }
  }
  // Releasing arms timers, which belongs on the dispatcher's thread.
  asio::post(io_, [this, alive = std::weak_ptr<int>(alive_)] {
    if (alive.expired()) return;
    for (auto& [name, ch] : channels_) {
      release_due(*ch);
      pump(*ch);
    }
  });
  return Ok{};
}

void Dispatcher::reconfigure(std::vector<Channel> channels) {
  asio::post(io_, [this, channels = std::move(channels), alive = std::weak_ptr<int>(alive_)]() mutable {
    if (alive.expired()) return;
    std::map<std::string, std::unique_ptr<ChannelState>> next;
    std::vector<ChannelState*> added;
    for (auto& c : channels) {
      auto it = channels_.find(c.name);
      std::unique_ptr<ChannelState> state;
      if (it != channels_.end()) {
        // health() walks channels_ from the HTTP threads under mu_: the slot this leaves
        // empty until the swap below is emptied under it too, and health() skips it.
        std::lock_guard lock(mu_);
        state = std::move(it->second);
      } else {
        state = std::make_unique<ChannelState>(*this);
        added.push_back(state.get());
      }
      {
        std::lock_guard lock(mu_);
        state->channel = std::move(c);
        describe(*state);
      }
      state->resender.adopt(state->channel);
      std::lock_guard lock(mu_);
      next[state->channel.name] = std::move(state);
    }
    {
      std::lock_guard lock(mu_);
      channels_.swap(next);  // `next` now holds the removed channels (and emptied slots)
    }
    // A removed channel's timers die with it and never fire. A send in flight completes
    // into on_sent, which no longer finds it.
    next.clear();
    for (ChannelState* ch : added) {
      if (auto loaded = load(*ch); !loaded) {
        spdlog::warn("notifications: channel {}: cannot read the outbox: {}", ch->channel.name,
                     loaded.error().message);
      }
      release_due(*ch);
      pump(*ch);
    }
  });
}

void Dispatcher::wake() {
  // Coalesced: many commits in a burst cost one read per channel.
  if (wake_posted_.exchange(true)) return;
  asio::post(io_, [this, alive = std::weak_ptr<int>(alive_)] {
    if (alive.expired()) return;
    wake_posted_ = false;
    for (auto& [name, ch] : channels_) {
      if (auto loaded = load(*ch); !loaded) {
        spdlog::warn("notifications: channel {}: cannot read the outbox: {}", name, loaded.error().message);
      }
      release_due(*ch);
      pump(*ch);
    }
  });
}

void Dispatcher::set_maintenance(std::vector<MaintenanceWindow> maintenance) {
  asio::post(io_, [this, maintenance = std::move(maintenance), alive = std::weak_ptr<int>(alive_)]() mutable {
    if (alive.expired()) return;
    maintenance_ = std::move(maintenance);
    for (auto& [name, ch] : channels_) {
      ch->queue.recheck_held(clock_.system_time());
      release_due(*ch);
      pump(*ch);
    }
  });
}

void Dispatcher::stop() {
  for (auto& [name, ch] : channels_) {
    ch->retry_timer->cancel();
    ch->hold_timer->cancel();
    ch->resender.stop();
  }
}

// Reads the channel's pending rows past its cursor, as many as there is room for, into
// its held set. On an error the rows stay in the store; the next wake or drained queue
// reads them.
Status Dispatcher::load(ChannelState& ch) {
  if (ch.queue.loaded() >= kMaxLoadedPerChannel) {
    ch.maybe_more = true;
    return Ok{};
  }
  const size_t room = kMaxLoadedPerChannel - ch.queue.loaded();
  // A new channel state (at start, or a channel added again) takes back what this replica
  // claimed before, as well: those rows are in no queue.
  auto rows = store_.claim_deliveries(
      DeliveryClaim{ch.channel.name, claimer_, ch.cursor, !ch.claimed, static_cast<int>(room), claimer_ttl_});
  note_outbox_read(ch, rows ? nullptr : &rows.error());
  if (!rows) {
    ch.maybe_more = true;
    return rows.error();
  }
  ch.claimed = true;
  for (auto& row : *rows) {
    ch.cursor = std::max(ch.cursor, row.id);
    auto event = event_from_json(row.spec.event);
    QueuedDelivery item{std::move(row), event ? std::move(*event) : AlertEvent{}, {}};
    if (!event) {
      close(ch, item, DeliveryStatus::kFailed, "the stored event cannot be read");
      continue;
    }
    // An alert's reminders and its recovery carry the labels it fired with (the culprit
    // named then); its recovery ends its re-sends.
    ch.resender.note_loaded(item);
    for (auto& cancelled : ch.queue.admit(std::move(item))) {
      close(ch, cancelled, DeliveryStatus::kCancelled, cancelled.row.last_error);
    }
  }
  ch.maybe_more = rows->size() == room;
  return Ok{};
}

// Keeps the outbox's health (outbox_trouble) and, after a failure, reads again later.
void Dispatcher::note_outbox_read(ChannelState& ch, const Error* failure) {
  {
    std::lock_guard lock(mu_);
    if (!failure) {
      ch.outbox_failing_since.reset();
      return;
    }
    if (!ch.outbox_failing_since) ch.outbox_failing_since = clock_.monotonic_time();
    ch.outbox_error = failure->message;
  }
  ch.reload_timer->arm(clock_.monotonic_time() + kOutboxRetry, [this, &ch] {
    if (!load(ch)) return;  // failed again: load() armed the next try
    release_due(ch);
    pump(ch);
  });
}

std::optional<Dispatcher::OutboxTrouble> Dispatcher::outbox_trouble() const {
  std::lock_guard lock(mu_);
  std::optional<OutboxTrouble> worst;
  const MonoTime now = clock_.monotonic_time();
  for (const auto& [name, ch] : channels_) {
    if (!ch || !ch->outbox_failing_since) continue;  // null: mid-reconfigure (see there)
    const auto failing_for = std::chrono::duration_cast<Millis>(now - *ch->outbox_failing_since);
    if (!worst || failing_for > worst->failing_for) worst = OutboxTrouble{failing_for, ch->outbox_error};
  }
  return worst;
}

// Releases what is due and waits for the next held row.
void Dispatcher::release_due(ChannelState& ch) {
  const SystemTime now = clock_.system_time();
  ch.queue.release_due(now, maintenance_);
  show_sizes(ch);
  ch.hold_timer->cancel();
  if (auto at = ch.queue.next_release()) {
    ch.hold_timer->arm_after(clock_, delay_until(*at, now), [this, &ch] {
      release_due(ch);
      pump(ch);
    });
  }
}

void Dispatcher::pump(ChannelState& ch) {
  // The channel's one request is a re-send; its answer pumps again.
  if (ch.resender.in_flight()) return;
  const SystemTime now = clock_.system_time();
  auto next = ch.queue.next(now);
  if (next.kind == ChannelQueue::Next::Kind::kIdle && ch.maybe_more) {
    if (auto loaded = load(ch); !loaded) {
      spdlog::warn("notifications: channel {}: cannot read the outbox: {}", ch.channel.name,
                   loaded.error().message);
    }
    release_due(ch);
    next = ch.queue.next(now);
  }
  switch (next.kind) {
    case ChannelQueue::Next::Kind::kBusy: return;
    case ChannelQueue::Next::Kind::kSend: send(ch); return;
    case ChannelQueue::Next::Kind::kWait:
      ch.retry_timer->arm_after(clock_, delay_until(next.at, now), [this, &ch] { pump(ch); });
      break;
    case ChannelQueue::Next::Kind::kIdle: break;
  }
  // Nothing of the outbox is ready to leave: the slot is free for re-sends.
  ch.resender.resend(ch.channel);
}

void Dispatcher::send(ChannelState& ch) {
  QueuedDelivery& item = ch.queue.start_send();
  const SystemTime now = clock_.system_time();
  begin_attempt(item.row, now);
  // Listed when it is sent, not when it was planned: a parent's DOWN held by notify_after
  // then names the monitors that fell with it during the hold. Retries say the same.
  if (affected_ && !item.affected_listed && item.event.kind != EventKind::kTest) {
    item.event.affected = affected_(item.event.monitor);
    item.affected_listed = true;
  }
  const Message message = channel_message(ch.channel, item.event, now);
  OutboundRequest request = ch.channel.provider->build(item.event, message, item.row.id, now);
  request.timeout = ch.channel.timeout;
  if (request.body.size() > kMaxRequestBytes) {
    close(ch, item, DeliveryStatus::kFailed, "the message is over 256 KiB and cannot be sent");
    {
      std::lock_guard lock(mu_);
      ch.health.counters.add(AttemptEnd::kRejected);
    }
    ch.queue.end_send(true);
    show_sizes(ch);
    pump(ch);
    return;
  }
  record(item.row);  // the attempt shows in the API while in flight, and counts after a restart
  {
    std::lock_guard lock(mu_);
    ch.health.in_flight = true;
    ch.health.next_attempt.reset();
  }
  sender_.send(request, [this, alive = std::weak_ptr<int>(alive_), name = ch.channel.name,
                         id = item.row.id](const SendOutcome& outcome) {
    if (!alive.expired()) on_sent(name, id, outcome);
  });
}

void Dispatcher::on_sent(const std::string& channel, int64_t id, const SendOutcome& o) {
  auto it = channels_.find(channel);
  if (it == channels_.end()) return;
  ChannelState& ch = *it->second;
  // Not this channel's request: the channel was removed by a reload while it flew, and one
  // of the same name added since (whose own request, if any, is still in flight).
  QueuedDelivery* item = ch.queue.in_flight(id);
  if (item == nullptr) return;
  const SystemTime now = clock_.system_time();
  const AttemptEnd end = settle_attempt(item->row, o, policy_, now, random_());
  int failures_before = 0;
  {
    std::lock_guard lock(mu_);
    failures_before = ch.health.note_attempt(end, item->row.next_attempt, o.error, now);
  }
  // One line when a channel starts failing and one when it works again; the attempts in
  // between are debug-level (a dead channel with 1,000 queued alerts must not flood the log).
  switch (end) {
    case AttemptEnd::kDelivered:
      if (failures_before > 0) {
        spdlog::info("notifications: channel {} delivers again after {} failed attempts", channel,
                     failures_before);
      }
      break;
    case AttemptEnd::kRejected:
      spdlog::warn("notifications: channel {}: delivery {} rejected for good: {}", channel, id, o.error);
      break;
    case AttemptEnd::kGaveUp:
      spdlog::error("notifications: channel {}: delivery {} {}", channel, id, item->row.last_error);
      break;
    case AttemptEnd::kRetry:
      spdlog::log(failures_before == 0 ? spdlog::level::warn : spdlog::level::debug,
                  "notifications: channel {}: delivery {} attempt {} failed ({}); next try in {}", channel,
                  id, item->row.attempts, o.error,
                  format_duration(delay_until(*item->row.next_attempt, now)));
      break;
  }
  record(item->row);
  if (end == AttemptEnd::kDelivered) ch.resender.note_delivered(*item, now);
  ch.queue.end_send(end != AttemptEnd::kRetry);
  if (ch.maybe_more && ch.queue.loaded() < kMaxLoadedPerChannel / 2) {
    if (auto loaded = load(ch); !loaded) {
      spdlog::warn("notifications: channel {}: cannot read the outbox: {}", channel, loaded.error().message);
    }
    release_due(ch);
  }
  show_sizes(ch);
  pump(ch);
}

void Dispatcher::close(ChannelState& ch, QueuedDelivery& item, DeliveryStatus status, std::string reason) {
  close_row(item.row, status, std::move(reason), clock_.system_time());
  if (status == DeliveryStatus::kCancelled) {
    std::lock_guard lock(mu_);
    ++ch.health.counters.cancelled;
  }
  record(item.row);
}

// Writes the row's delivery state. Not waited for: if the process dies first, the row is
// still pending and is sent again (at-least-once).
void Dispatcher::record(const Delivery& r) {
  UpdateDelivery op{r.id,           r.status,     r.attempts,    r.first_attempt, r.last_attempt,
                    r.next_attempt, r.last_error, r.http_status, r.finished};
  if (!store_.write(op)) {
    spdlog::warn("notifications: the store's queue is full; delivery {} stays pending and may be sent again",
                 r.id);
  }
}

void Dispatcher::show_sizes(ChannelState& ch) {
  std::lock_guard lock(mu_);
  ch.health.queued = ch.queue.ready();
  ch.health.held = ch.queue.held();
  ch.health.backlog_in_store = ch.maybe_more;
}

void Dispatcher::test(const std::string& channel, std::function<void(TestOutcome)> done) {
  asio::post(io_, [this, channel, done = std::move(done), alive = std::weak_ptr<int>(alive_)]() mutable {
    if (alive.expired()) return;
    auto it = channels_.find(channel);
    if (it == channels_.end())
      return done(TestOutcome{false, 0, "no channel named '" + channel + "'", 0, test_reason::kNoChannel});
    if (tests_in_flight_ >= kMaxTestsInFlight)
      return done(TestOutcome{false, 0, "busy: too many tests in flight", 0, test_reason::kBusy});
    const Channel& ch = it->second->channel;
    const SystemTime now = clock_.system_time();
    AlertEvent event;
    event.kind = EventKind::kTest;
    event.monitor = channel;
    event.at = now;
    OutboundRequest request = ch.provider->build(event, channel_message(ch, event, now), 0, now);
    request.timeout = ch.timeout;
    ++tests_in_flight_;
    // The channel is looked up again by name when the answer comes: a reload may have
    // removed it meanwhile.
    sender_.send(request, [this, alive, channel, done = std::move(done)](const SendOutcome& o) {
      if (alive.expired()) return;
      --tests_in_flight_;
      const bool ok = judge_attempt(o.transport_ok, o.permanent, o.status) == AttemptVerdict::kDelivered;
      if (auto found = channels_.find(channel); found != channels_.end()) {
        std::lock_guard lock(mu_);
        note_test(found->second->health, ok, o.error, clock_.system_time());
      }
      const std::string_view reason = ok               ? test_reason::kDelivered
                                      : o.refused_here ? test_reason::kOnThisHost
                                      : o.transport_ok ? test_reason::kRefused
                                                       : test_reason::kUnreachable;
      done(TestOutcome{ok, o.status, o.error, o.latency_ms, reason});
    });
  });
}

std::vector<ChannelHealth> Dispatcher::health() const {
  std::lock_guard lock(mu_);
  std::vector<ChannelHealth> out;
  out.reserve(channels_.size());
  for (const auto& [name, ch] : channels_) {
    if (ch) out.push_back(ch->health);  // null: moved to its reconfigured map, not yet swapped in
  }
  return out;
}

}  // namespace trainwatch::alerting
