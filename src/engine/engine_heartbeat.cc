// Engine's heartbeat monitors: pings (the quiet success path on the caller's thread, the
// rest on the io thread) and the deadline timers armed from them. The rules for what a
// ping or a deadline means are heartbeat/rules.h's.
// Threading: record_ping() and record_quiet_success() on any thread (under mu_); the rest
// on the io thread.
#include "engine/engine.h"

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

#include <algorithm>

#include "engine/engine_runtime.h"
#include "heartbeat/rules.h"

namespace trainwatch::engine {

namespace asio = boost::asio;

void Engine::record_ping(std::string name, Ping ping, WriteDone done) {
  if (!record_quiet_success(name, ping)) {
    asio::post(io_, [this, name = std::move(name), ping = std::move(ping), done = std::move(done)]() mutable {
      on_ping(name, std::move(ping), std::move(done));
      leave_io(name);
    });
    return;
  }
  write_ping(RecordPing{PingRecord{0, std::move(name), std::move(ping), std::nullopt}}, std::move(done));
}

void Engine::write_ping(RecordPing op, WriteDone done) {
  WriteDone refused = done;
  if (!store_.write(std::move(op), std::move(done))) {
    {
      std::lock_guard lock(mu_);
      ++stats_.store_dropped_writes;
    }
    if (refused) refused(make_error(store_error::kUnavailable, "the store's write queue is full"));
  }
}

bool Engine::record_quiet_success(const std::string& name, const Ping& ping) {
  std::lock_guard lock(mu_);
  auto it = by_name_.find(name);
  auto pending = in_io_.empty() ? in_io_.end() : in_io_.find(name);  // nearly always empty
  Runtime* r = it == by_name_.end() ? nullptr : it->second;
  // Awaiting a finish already means its deadline timer is armed: a success only moves
  // that deadline later, and the timer re-arms itself when it fires early.
  const bool quiet = r != nullptr && r->owned && r->heartbeat && ping.kind == PingKind::kSuccess &&
                     pending == in_io_.end() && r->state.status == MonitorStatus::kUp &&
                     r->state.consecutive_failures == 0 && r->heartbeat->last_finish &&
                     !r->heartbeat->open_start;
  if (!quiet) {
    ++in_io_[name];
    return false;
  }
  heartbeat::PingEffect effect = heartbeat::on_ping(std::get<HeartbeatSpec>(r->config->spec), *r->heartbeat,
                                                    ping, clock_.monotonic_time());
  if (effect.result) count_result(*r, *effect.result);
  r->quiet_success = std::move(effect.result);
  // Field by field, so the strings reuse their buffers: this runs for nearly every ping.
  PingRecord& last = r->last_ping ? *r->last_ping : r->last_ping.emplace();
  last.id = 0;
  last.monitor = name;
  last.ping.kind = ping.kind;
  last.ping.exit_code = ping.exit_code;
  last.ping.at = ping.at;
  last.ping.source = ping.source;
  last.ping.user_agent = ping.user_agent;
  last.ping.body.clear();
  last.ping.body_truncated = ping.body_truncated;
  last.run_ms.reset();
  r->revision = next_revision_++;
  return true;
}

void Engine::on_ping(const std::string& name, Ping ping, WriteDone done) {
  auto it = monitors_.find(name);
  if (it == monitors_.end() || !it->second->heartbeat) {
    if (done) done(make_error("engine.not_heartbeat", "no heartbeat monitor named '" + name + "'"));
    return;
  }
  Runtime& r = *it->second;
  if (!r.owned || !owned_here(name)) {
    // Its owner reads it from the store (catch_up_pings): at once when it starts a run or
    // changes the state as this replica last read it (a nudge), else at its next
    // deadline. Readers here see it at once.
    const bool tell_owner =
        ping.kind == PingKind::kStart ||
        (is_finish(ping.kind) && (is_failure(ping) || r.state.status != MonitorStatus::kUp));
    {
      std::lock_guard lock(mu_);
      r.last_ping = PingRecord{0, name, ping, std::nullopt};
      r.last_ping->ping.body.clear();
      r.revision = next_revision_++;
    }
    return write_ping(RecordPing{PingRecord{0, name, std::move(ping), std::nullopt}, tell_owner},
                      std::move(done));
  }
  if (hold_ping(r, ping, done)) return;
  PingRecord record{0, name, std::move(ping), std::nullopt};
  heartbeat::PingEffect effect;
  {
    std::lock_guard lock(mu_);
    effect = heartbeat::on_ping(std::get<HeartbeatSpec>(r.config->spec), *r.heartbeat, record.ping,
                                clock_.monotonic_time());
    if (effect.run_time) record.run_ms = effect.run_time->count();
    r.last_ping = PingRecord{0, name, record.ping, record.run_ms};
    r.last_ping->ping.body.clear();
    if (record.ping.kind == PingKind::kStart) r.started_at = record.ping.at;
    if (is_finish(record.ping.kind)) r.started_at.reset();
    r.revision = next_revision_++;  // the view's last ping changed
  }
  // The state change is queued first, so the ping's done (after its commit) implies it.
  if (effect.result) apply(r, *effect.result, /*history=*/false);
  arm_deadline(r);
  if (r.committing && done) {
    // The ping changed the monitor's state: that change commits first, but it is applied
    // on this thread, after its commit. Answering from here too means a client that got
    // 200 for a finish ping reads the monitor up, not the state before its ping.
    done = [this, done = std::move(done)](const Status& status) {
      asio::post(io_, [done, status] { done(status); });
    };
  }
  write_ping(RecordPing{std::move(record)}, std::move(done));
}

void Engine::retry_deadline(Runtime& r) {
  const MonoTime retry = clock_.monotonic_time() + kPingReadRetry;
  r.armed_deadline = retry;
  r.timer->arm(retry, [this, &r] { on_deadline(r); });
}

void Engine::watch_store() {
  const MonoTime now = clock_.monotonic_time();
  const WriteHealth health = store_.write_health();
  std::string why;
  // When the trouble began: the pings held up in a late write were held from its start,
  // seconds before it counts as late, and a deadline must move by all of that.
  MonoTime since = now;
  {
    std::lock_guard lock(mu_);
    if (!pings_unreadable_.empty()) why = "the stored pings cannot be read: " + pings_unreadable_reason_;
    for (const auto& [name, at] : pings_unreadable_) since = std::min(since, at);
  }
  if (health.late()) {
    why = "its writes are late (a locked table, a stalled server)";
    since = std::min(since, now - health.writing_for);
  }
  if (health.refusing) why = health.reason;
  if (!why.empty() && !outages_.out_since()) outage_reason_ = why;
  if (auto ended = outages_.observe(!why.empty(), now, since)) outage_ended(*ended);
  store_watch_->arm(now + kStoreWatchEvery, [this] { watch_store(); });
}

void Engine::outage_ended(const OutageSpan& span) {
  size_t moved = 0;
  for (auto& [name, runtime] : monitors_) {
    Runtime& r = *runtime;
    if (!r.owned || !r.heartbeat) continue;
    {
      std::lock_guard lock(mu_);
      heartbeat::move_deadlines(*r.heartbeat, span.from, span.to);
      r.revision = next_revision_++;  // readers show the moved due time
    }
    ++moved;
    arm_deadline(r);
  }
  const Millis lasted = std::chrono::duration_cast<Millis>(span.to - span.from);
  spdlog::warn(
      "store: pings could not be taken or read for {:.1f} s ({}); {} heartbeat deadline(s) moved by it",
      static_cast<double>(lasted.count()) / 1000.0, outage_reason_, moved);
  if (alerts_ == nullptr || lasted < kOutageAlertAfter) return;
  const MonoTime now = clock_.monotonic_time();
  const SystemTime wall_now = clock_.system_time();
  auto wall = [&](MonoTime t) {
    return wall_now - std::chrono::duration_cast<SystemTime::duration>(now - t);
  };
  std::vector<NewDelivery> rows = alerts_->on_store_outage(wall(span.from), wall(span.to), outage_reason_);
  if (rows.empty()) return;
  write(RecordStoreOutage{wall(span.from), wall(span.to), std::move(rows)}, [this](const Status& status) {
    if (status) asio::post(io_, [this] { alerts_->committed(); });
  });
}

void Engine::move_by_outages(heartbeat::Track& track) const {
  for (const OutageSpan& span : outages_.ended()) heartbeat::move_deadlines(track, span.from, span.to);
}

Millis Engine::outages_after(MonoTime ping) const {
  Millis moved{0};
  for (const OutageSpan& span : outages_.ended()) moved += heartbeat::outage_after(ping, span.from, span.to);
  return moved;
}

// Arms the timer for the track's next deadline. A deadline that only moved later (every
// success ping) keeps the armed timer: when it fires, on_deadline finds nothing due and
// re-arms, which costs one wake-up per period instead of a timer reset per ping.
void Engine::arm_deadline(Runtime& r) {
  if (!r.owned) return;
  const auto& spec = std::get<HeartbeatSpec>(r.config->spec);
  std::optional<MonoTime> deadline;
  {
    std::lock_guard lock(mu_);
    deadline = heartbeat::next_deadline(spec, *r.heartbeat);
  }
  if (!deadline) return;
  if (r.armed_deadline && *r.armed_deadline <= *deadline) return;
  r.armed_deadline = deadline;
  r.timer->arm(*deadline, [this, &r] { on_deadline(r); });
}

void Engine::on_deadline(Runtime& r) {
  r.armed_deadline.reset();
  if (!r.heartbeat || !r.owned) return;  // reconfigured as a checked monitor while paused; handed over
  // Replicas first read the pings any replica stored, off this thread (engine_reads.cc).
  if (ownership_ != nullptr) return read_pings(r, /*judge=*/true);
  judge_deadline(r);
}

void Engine::judge_deadline(Runtime& r) {
  if (!r.heartbeat || !r.owned) return;
  const std::string name = r.config->name;
  // The lease lapsed (or the monitor moved) since the last sync: no verdict; the sync that
  // follows lets it go, and whoever owns it then re-arms the deadline.
  if (!owned_here(name)) return;
  // The store is out: the pings that would clear it may be the ones it refuses. When it is
  // back, the deadline moves by the outage (outage_ended).
  if (outages_.out_since()) return retry_deadline(r);
  std::optional<std::string> cause;
  {
    std::lock_guard lock(mu_);
    cause = heartbeat::check_deadlines(std::get<HeartbeatSpec>(r.config->spec), *r.heartbeat,
                                       clock_.monotonic_time());
    // A ping arriving meanwhile must not slip past this failure on the quiet path.
    if (cause) ++in_io_[name];
  }
  if (cause) {
    CheckResult result;
    result.at = clock_.system_time();
    result.cause = std::move(*cause);
    apply(r, result);
    leave_io(name);
  }
  arm_deadline(r);
}

}  // namespace trainwatch::engine
