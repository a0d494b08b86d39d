#include "alerting/dispatcher.h"

#include <algorithm>
#include <deque>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <spdlog/spdlog.h>

#include "alerting/event.h"
#include "alerting/maintenance.h"
#include "alerting/message.h"
#include "core/duration.h"

namespace trainwatch::alerting {

namespace asio = boost::asio;

struct Dispatcher::Item {
  Delivery row;
  AlertEvent event;
  SystemTime release_at{};  // held items: when to look again
};

struct Dispatcher::ChannelState {
  explicit ChannelState(asio::io_context& io) : retry_timer(io), hold_timer(io) {}

  Channel channel;
  // io thread only.
  std::deque<Item> ready;   // released, in release order; the front is in flight or waiting to retry
  std::vector<Item> held;   // not due yet, or in maintenance
  int64_t cursor = 0;       // the highest id read from the store
  bool maybe_more = false;  // the store may hold pending rows past the cursor
  bool in_flight = false;
  asio::steady_timer retry_timer;
  asio::steady_timer hold_timer;
  // Under mu_.
  ChannelHealth health;
};

Dispatcher::Dispatcher(asio::io_context& io, const Clock& clock, Store& store, RandomUnit random, RetryPolicy policy)
    : io_(io), clock_(clock), store_(store), random_(std::move(random)), policy_(policy), transport_(io) {}

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
    auto state = std::make_unique<ChannelState>(io_);
    state->channel = std::move(c);
    describe(*state);
    channels_[state->channel.name] = std::move(state);
  }
  // Pending rows of a channel no longer configured stay pending (and are sent if the
  // channel comes back); they are not loaded.
  for (auto& [name, ch] : channels_) {
    auto rows = store_.deliveries(DeliveryQuery{name, std::nullopt, DeliveryStatus::kPending, int64_t{0}, std::nullopt,
                                                static_cast<int>(kMaxLoadedPerChannel)});
    if (!rows) return rows.error();
    ch->cursor = 0;
    for (auto& row : *rows) {
      ch->cursor = std::max(ch->cursor, row.id);
      auto event = event_from_json(row.spec.event);
      Item item{std::move(row), event ? std::move(*event) : AlertEvent{}, {}};
      if (!event) {
        item.row.last_error = "the stored event cannot be read";
        finish(*ch, item, DeliveryStatus::kFailed);
        continue;
      }
      admit(*ch, std::move(item));
    }
    ch->maybe_more = rows->size() == kMaxLoadedPerChannel;
    if (!ch->ready.empty() || !ch->held.empty()) {
      spdlog::info("notifications: channel {} resumes {} pending deliveries", name, ch->ready.size() + ch->held.size());
    }
  }
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
        state = std::move(it->second);
      } else {
        state = std::make_unique<ChannelState>(io_);
        added.push_back(state.get());
      }
      std::lock_guard lock(mu_);
      state->channel = std::move(c);
      describe(*state);
      next[state->channel.name] = std::move(state);
    }
    {
      std::lock_guard lock(mu_);
      channels_.swap(next);  // `next` now holds the removed channels (and emptied slots)
    }
    // A removed channel's timers die with it; their handlers see operation_aborted and
    // touch nothing. A send in flight completes into on_sent, which no longer finds it.
    next.clear();
    for (ChannelState* ch : added) {
      load(*ch);
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
      load(*ch);
      pump(*ch);
    }
  });
}

void Dispatcher::set_maintenance(std::vector<MaintenanceWindow> maintenance) {
  asio::post(io_, [this, maintenance = std::move(maintenance), alive = std::weak_ptr<int>(alive_)]() mutable {
    if (alive.expired()) return;
    maintenance_ = std::move(maintenance);
    for (auto& [name, ch] : channels_) {
      // Held items are looked at again under the new windows.
      for (auto& item : ch->held) item.release_at = clock_.system_time();
      release_due(*ch);
      pump(*ch);
    }
  });
}

void Dispatcher::stop() {
  for (auto& [name, ch] : channels_) {
    ch->retry_timer.cancel();
    ch->hold_timer.cancel();
  }
}

// Reads the channel's pending rows past its cursor, as many as there is room for.
void Dispatcher::load(ChannelState& ch) {
  const size_t loaded = ch.ready.size() + ch.held.size();
  if (loaded >= kMaxLoadedPerChannel) {
    ch.maybe_more = true;
    return;
  }
  const size_t room = kMaxLoadedPerChannel - loaded;
  auto rows = store_.deliveries(DeliveryQuery{ch.channel.name, std::nullopt, DeliveryStatus::kPending, ch.cursor,
                                              std::nullopt, static_cast<int>(room)});
  if (!rows) {
    // The rows stay in the store; the next wake or drained queue reads them.
    spdlog::warn("notifications: channel {}: cannot read the outbox: {}", ch.channel.name, rows.error().message);
    ch.maybe_more = true;
    return;
  }
  for (auto& row : *rows) {
    ch.cursor = std::max(ch.cursor, row.id);
    auto event = event_from_json(row.spec.event);
    Item item{std::move(row), event ? std::move(*event) : AlertEvent{}, {}};
    if (!event) {
      item.row.last_error = "the stored event cannot be read";
      finish(ch, item, DeliveryStatus::kFailed);
      continue;
    }
    admit(ch, std::move(item));
  }
  ch.maybe_more = rows->size() == room;
  release_due(ch);
}

// Places a newly read row: a recovery whose DOWN is still held cancels both; anything
// else waits in `held` until due, then joins the FIFO.
void Dispatcher::admit(ChannelState& ch, Item item) {
  const auto kind = event_kind_from_string(item.row.spec.kind).value_or(EventKind::kDown);
  if (kind == EventKind::kUp && item.row.spec.incident_id) {
    const int64_t incident = *item.row.spec.incident_id;
    bool down_held = false;
    for (auto it = ch.held.begin(); it != ch.held.end();) {
      if (it->row.spec.incident_id == incident) {
        down_held = down_held || it->row.spec.kind == "down";
        it->row.last_error = "cancelled: recovered before the alert was released";
        finish(ch, *it, DeliveryStatus::kCancelled);
        it = ch.held.erase(it);
      } else {
        ++it;
      }
    }
    if (down_held) {
      item.row.last_error = "cancelled: the DOWN alert was never released";
      finish(ch, item, DeliveryStatus::kCancelled);
      return;
    }
  }
  // A row attempted before a restart was released then: it goes straight back in line.
  item.release_at = item.row.attempts > 0 ? SystemTime{} : item.row.spec.due;
  ch.held.push_back(std::move(item));
}

// Moves held items that are due and outside maintenance to the FIFO, in due order.
void Dispatcher::release_due(ChannelState& ch) {
  const SystemTime now = clock_.system_time();
  std::stable_sort(ch.held.begin(), ch.held.end(), [](const Item& a, const Item& b) {
    return a.release_at != b.release_at ? a.release_at < b.release_at : a.row.id < b.row.id;
  });
  std::vector<Item> still_held;
  for (auto& item : ch.held) {
    if (item.release_at > now) {
      still_held.push_back(std::move(item));
      continue;
    }
    if (item.row.attempts == 0) {
      if (auto until = held_until(maintenance_, item.event.monitor, item.event.tags, now)) {
        item.release_at = *until;
        still_held.push_back(std::move(item));
        continue;
      }
    }
    ch.ready.push_back(std::move(item));
  }
  ch.held = std::move(still_held);
  {
    std::lock_guard lock(mu_);
    ch.health.queued = ch.ready.size();
    ch.health.held = ch.held.size();
    ch.health.backlog_in_store = ch.maybe_more;
  }
  arm_hold_timer(ch);
}

void Dispatcher::arm_hold_timer(ChannelState& ch) {
  ch.hold_timer.cancel();
  if (ch.held.empty()) return;
  SystemTime earliest = ch.held.front().release_at;
  for (const auto& item : ch.held) earliest = std::min(earliest, item.release_at);
  // Steady timers run on the real clock; wait for the distance from the injected one.
  ch.hold_timer.expires_after(std::max(Millis(0), std::chrono::duration_cast<Millis>(earliest - clock_.system_time())));
  ch.hold_timer.async_wait([this, &ch](boost::system::error_code ec) {
    if (ec) return;
    release_due(ch);
    pump(ch);
  });
}

void Dispatcher::pump(ChannelState& ch) {
  if (ch.in_flight) return;
  if (ch.ready.empty()) {
    if (ch.maybe_more) load(ch);
    if (ch.ready.empty()) return;
  }
  Item& front = ch.ready.front();
  const SystemTime now = clock_.system_time();
  if (front.row.next_attempt && *front.row.next_attempt > now) {
    ch.retry_timer.expires_after(std::chrono::duration_cast<Millis>(*front.row.next_attempt - now));
    ch.retry_timer.async_wait([this, &ch](boost::system::error_code ec) {
      if (!ec) pump(ch);
    });
    return;
  }
  send(ch);
}

void Dispatcher::send(ChannelState& ch) {
  Item& item = ch.ready.front();
  const SystemTime now = clock_.system_time();
  if (!item.row.first_attempt) item.row.first_attempt = now;
  ++item.row.attempts;
  item.row.last_attempt = now;
  item.row.next_attempt.reset();
  const Message message = render_message(item.event, now);
  OutboundRequest request = ch.channel.provider->build(item.event, message, item.row.id, now);
  request.timeout = ch.channel.timeout;
  if (request.body.size() > kMaxRequestBytes) {
    item.row.last_error = "the message is over 256 KiB and cannot be sent";
    count(ch, &DeliveryCounters::rejected);
    finish(ch, item, DeliveryStatus::kFailed);
    ch.ready.pop_front();
    pump(ch);
    return;
  }
  ch.in_flight = true;
  record(item);  // the attempt shows in the API while in flight, and counts after a restart
  {
    std::lock_guard lock(mu_);
    ch.health.in_flight = true;
    ch.health.next_attempt.reset();
  }
  transport_.send(request, [this, name = ch.channel.name, id = item.row.id](SendOutcome outcome) {
    on_sent(name, id, outcome);
  });
}

void Dispatcher::on_sent(const std::string& channel, int64_t id, const SendOutcome& o) {
  auto it = channels_.find(channel);
  if (it == channels_.end()) return;
  ChannelState& ch = *it->second;
  // Not this channel's request: the channel was removed by a reload while it flew, and one
  // of the same name added since (whose own request, if any, is still in flight).
  if (!ch.in_flight || ch.ready.empty() || ch.ready.front().row.id != id) return;
  ch.in_flight = false;
  Item& item = ch.ready.front();
  const SystemTime now = clock_.system_time();
  item.row.http_status = o.status;
  const AttemptVerdict verdict = judge_attempt(o.transport_ok, o.permanent, o.status);
  bool done = true;
  int failures_before = 0;
  {
    std::lock_guard lock(mu_);
    ch.health.in_flight = false;
    failures_before = ch.health.consecutive_failures;
    if (verdict == AttemptVerdict::kDelivered) {
      ch.health.last_success = now;
      ch.health.consecutive_failures = 0;
    } else {
      ch.health.last_failure = now;
      ch.health.last_error = o.error;
      ++ch.health.consecutive_failures;
    }
  }
  // One line when a channel starts failing and one when it works again; the attempts in
  // between are debug-level (a dead channel with 1,000 queued alerts must not flood the log).
  if (verdict == AttemptVerdict::kDelivered && failures_before > 0) {
    spdlog::info("notifications: channel {} delivers again after {} failed attempts", channel, failures_before);
  }
  switch (verdict) {
    case AttemptVerdict::kDelivered:
      item.row.last_error.clear();
      count(ch, &DeliveryCounters::delivered);
      finish(ch, item, DeliveryStatus::kDelivered);
      break;
    case AttemptVerdict::kPermanent:
      item.row.last_error = o.error;
      spdlog::warn("notifications: channel {}: delivery {} rejected for good: {}", channel, id, o.error);
      count(ch, &DeliveryCounters::rejected);
      finish(ch, item, DeliveryStatus::kFailed);
      break;
    case AttemptVerdict::kRetry: {
      std::optional<Millis> retry_after;
      if (o.retry_after && (o.status == 429 || o.status == 503)) retry_after = parse_retry_after(*o.retry_after, now);
      const RetryDecision d =
          decide_retry(policy_, item.row.attempts, item.row.first_attempt.value_or(now), now, retry_after, random_());
      if (d.give_up) {
        item.row.last_error = "gave up after " + format_duration(policy_.give_up_after) + " and " +
                              std::to_string(item.row.attempts) + " attempts: " + o.error;
        spdlog::error("notifications: channel {}: delivery {} {}", channel, id, item.row.last_error);
        count(ch, &DeliveryCounters::gave_up);
        finish(ch, item, DeliveryStatus::kFailed);
        break;
      }
      item.row.last_error = o.error;
      item.row.next_attempt = d.next_attempt;
      spdlog::log(failures_before == 0 ? spdlog::level::warn : spdlog::level::debug,
                  "notifications: channel {}: delivery {} attempt {} failed ({}); next try in {}", channel, id,
                  item.row.attempts, o.error, format_duration(std::chrono::duration_cast<Millis>(d.next_attempt - now)));
      count(ch, &DeliveryCounters::error);
      record(item);
      {
        std::lock_guard lock(mu_);
        ch.health.next_attempt = d.next_attempt;
      }
      done = false;
      break;
    }
  }
  if (done) ch.ready.pop_front();
  if (ch.maybe_more && ch.ready.size() + ch.held.size() < kMaxLoadedPerChannel / 2) load(ch);
  {
    std::lock_guard lock(mu_);
    ch.health.queued = ch.ready.size();
    ch.health.held = ch.held.size();
  }
  pump(ch);
}

void Dispatcher::finish(ChannelState& ch, Item& item, DeliveryStatus status) {
  item.row.status = status;
  item.row.finished = clock_.system_time();
  item.row.next_attempt.reset();
  if (status == DeliveryStatus::kCancelled) count(ch, &DeliveryCounters::cancelled);
  record(item);
}

// Writes the row's delivery state. Not waited for: if the process dies first, the row is
// still pending and is sent again (at-least-once).
void Dispatcher::record(const Item& item) {
  const Delivery& r = item.row;
  UpdateDelivery op{r.id,           r.status,       r.attempts,   r.first_attempt, r.last_attempt,
                    r.next_attempt, r.last_error,   r.http_status, r.finished};
  if (!store_.write(op)) {
    spdlog::warn("notifications: the store's queue is full; delivery {} stays pending and may be sent again", r.id);
  }
}

void Dispatcher::count(ChannelState& ch, uint64_t DeliveryCounters::*field) {
  std::lock_guard lock(mu_);
  ++(ch.health.counters.*field);
}

void Dispatcher::test(const std::string& channel, std::function<void(TestOutcome)> done) {
  asio::post(io_, [this, channel, done = std::move(done), alive = std::weak_ptr<int>(alive_)]() mutable {
    if (alive.expired()) return;
    auto it = channels_.find(channel);
    if (it == channels_.end()) return done(TestOutcome{false, 0, "no channel named '" + channel + "'", 0});
    if (tests_in_flight_ >= kMaxTestsInFlight) return done(TestOutcome{false, 0, "busy: too many tests in flight", 0});
    ChannelState& ch = *it->second;
    const SystemTime now = clock_.system_time();
    AlertEvent event;
    event.kind = EventKind::kTest;
    event.monitor = channel;
    event.at = now;
    OutboundRequest request = ch.channel.provider->build(event, render_message(event, now), 0, now);
    request.timeout = ch.channel.timeout;
    ++tests_in_flight_;
    transport_.send(request, [this, &ch, done = std::move(done)](SendOutcome o) {
      --tests_in_flight_;
      const bool ok = judge_attempt(o.transport_ok, o.permanent, o.status) == AttemptVerdict::kDelivered;
      count(ch, ok ? &DeliveryCounters::delivered : &DeliveryCounters::error);
      done(TestOutcome{ok, o.status, o.error, o.latency_ms});
    });
  });
}

std::vector<ChannelHealth> Dispatcher::health() const {
  std::lock_guard lock(mu_);
  std::vector<ChannelHealth> out;
  out.reserve(channels_.size());
  for (const auto& [name, ch] : channels_) out.push_back(ch->health);
  return out;
}

}  // namespace trainwatch::alerting
