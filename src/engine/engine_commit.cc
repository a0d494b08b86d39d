// Engine's commit-gated state changes ("State changes" in engine.h): a change written as
// one RecordResult and shown only once committed, what arrives for its monitor meanwhile
// held (or, once the store refused it, dropped), and the retries of a refused write.
// Threading: io thread only; the store's answers are posted back to it.
#include "engine/engine.h"

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

#include <algorithm>

#include "engine/engine_runtime.h"

namespace trainwatch::engine {

namespace asio = boost::asio;

void Engine::commit_change(Runtime& r, RecordResult record, const CheckResult& result) {
  auto change = std::make_unique<PendingChange>(timers_.make_timer());
  change->id = next_change_id_++;
  change->record = std::move(record);
  {
    std::lock_guard lock(mu_);
    count_result(r, result);
    // Keeps this monitor's pings off the quiet path until the change is in memory.
    ++in_io_[r.config->name];
    ++stats_.changes_waiting;
  }
  r.committing = std::move(change);
  try_commit(r);
}

void Engine::try_commit(Runtime& r) {
  PendingChange& c = *r.committing;
  // The answer comes on the store's writer thread; the change is applied on this one.
  auto done = [this, name = r.config->name, id = c.id](const Status& status) {
    asio::post(io_, [this, name, id, status] { on_commit(name, id, status); });
  };
  if (store_.write(c.record, std::move(done))) return;
  {
    std::lock_guard lock(mu_);
    ++stats_.store_dropped_writes;
  }
  on_commit(r.config->name, c.id, make_error("store.unavailable", "the store's write queue is full"));
}

void Engine::on_commit(const std::string& name, uint64_t change_id, const Status& status) {
  auto it = monitors_.find(name);
  if (it == monitors_.end()) return;  // removed by a reload meanwhile
  Runtime& r = *it->second;
  if (!r.committing || r.committing->id != change_id) return;
  // Not retried once this replica stopped owning the monitor (its lease lapsed, or the
  // monitor moved): it would be written under an epoch that is no longer its own.
  const bool stale = ownership_ != nullptr && (!r.owned || !owned_here(name));
  if (!status && status.error().code == "store.unavailable" && !stale) return retry_commit(r, status.error());
  std::unique_ptr<PendingChange> change = std::move(r.committing);
  const std::string_view to = to_string(change->record.state.status);
  if (status) {
    show_committed(r, *change);
  } else if (status.error().code == "store.fenced" || (stale && status.error().code == "store.unavailable")) {
    return drop_fenced(r, *change,
                       stale ? "this replica no longer owns the monitor" : status.error().message);
  } else if (status.error().code == "store.conflict") {
    // Another replica, the monitor's owner a moment ago, changed it first: its change
    // stands, and this one (and its alerts) was never stored.
    spdlog::warn("monitor {}: its change to {} is dropped, {}; following the stored state", name, to,
                 status.error().message);
    {
      std::lock_guard lock(mu_);
      --stats_.changes_waiting;
    }
    follow_stored_now(r);
  } else {
    // Fails the same way again: drop it; the monitor's next result decides it anew.
    spdlog::error("monitor {}: its change to {} cannot be stored and is dropped: {}", name, to,
                  status.error().message);
    std::lock_guard lock(mu_);
    --stats_.changes_waiting;
    ++stats_.results_dropped;
  }
  leave_io(name);
  release_held(r, /*refused=*/false);
}

void Engine::retry_commit(Runtime& r, const Error& refused) {
  PendingChange& c = *r.committing;
  ++c.attempts;
  // 100 ms, 200 ms, ... 5 s: a disk that frees up is noticed within 5 s, and a full one
  // costs one write of this change per 5 s.
  const auto delay = std::min<std::chrono::milliseconds>(
      kCommitRetryMax, kCommitRetryFirst * (1LL << std::min(c.attempts - 1, 10)));
  if (auto events = retry_log_.admit(clock_.monotonic_time())) {
    spdlog::warn(
        "monitor {}: its change to {} is not stored yet ({}); retrying in {} ms ({} refused write(s) "
        "of state changes since the last report)",
        r.config->name, to_string(c.record.state.status), refused.message, delay.count(), *events);
  }
  release_held(r, /*refused=*/true);
  // The timer belongs to this change: it fires only while the change is still committing.
  c.retry->arm_after(clock_, delay, [this, &r] { try_commit(r); });
}

void Engine::show_committed(Runtime& r, const PendingChange& change) {
  const std::string& name = r.config->name;
  const RecordResult& record = change.record;
  MonitorState next = record.state;
  const bool paused = r.state.status == MonitorStatus::kPaused;  // paused while it committed
  if (paused) {
    next.status = MonitorStatus::kPaused;
    next.since = r.state.since;
  }
  {
    std::lock_guard lock(mu_);
    r.state = next;
    r.last_result = record.result;
    r.revision = next_revision_++;
    state_changed();
    if (record.opened) r.open_incident = record.opened;
    if (record.closed) r.open_incident.reset();
    --stats_.changes_waiting;
  }
  // A pause's (or resume's) own save held the state before this change and may have
  // committed before it: the state now shown is saved again, the pause winning.
  if (paused || change.state_saved_meanwhile) write(SaveState{name, next});
  if (change.attempts > 0) {
    spdlog::info("monitor {}: its change to {} is stored, after {} refused write(s)", name,
                 to_string(record.state.status), change.attempts);
  }
  if (!record.outbox.empty() && alerts_ != nullptr) alerts_->committed();
}

void Engine::drop_fenced(Runtime& r, const PendingChange& change, const std::string& why) {
  const std::string& name = r.config->name;
  spdlog::warn("monitor {}: its change to {} is dropped: {}", name, to_string(change.record.state.status),
               why);
  {
    std::lock_guard lock(mu_);
    --stats_.changes_waiting;
    ++stats_.results_dropped;
  }
  leave_io(name);
  release_held(r, /*refused=*/true);
  if (change.record.epoch) on_fenced(r, *change.record.epoch);
}

bool Engine::hold_result(Runtime& r, const CheckResult& result, bool history) {
  if (!r.committing) return false;
  if (r.committing->attempts > 0 || r.held.size() >= kMaxHeldWhileCommitting) {
    {
      std::lock_guard lock(mu_);
      count_result(r, result);
      ++stats_.results_dropped;
    }
    note_drop(r.config->name, "result");
    return true;
  }
  r.held.push_back(HeldItem{result, history, std::nullopt, {}});
  return true;
}

bool Engine::hold_ping(Runtime& r, Ping& ping, WriteDone& done) {
  if (!r.committing) return false;
  if (r.committing->attempts > 0 || r.held.size() >= kMaxHeldWhileCommitting) {
    {
      std::lock_guard lock(mu_);
      ++stats_.pings_refused;
    }
    note_drop(r.config->name, "ping");
    if (done)
      done(make_error("store.unavailable",
                      "the monitor's last change is not stored yet: the store refuses writes"));
    return true;
  }
  r.held.push_back(HeldItem{std::nullopt, true, std::move(ping), std::move(done)});
  return true;
}

// Committed: what was held goes through apply()/on_ping() in order, until one of them
// starts a change of its own (the rest then waits for that one). Refused: it is dropped.
void Engine::release_held(Runtime& r, bool refused) {
  const std::string name = r.config->name;
  while (!r.held.empty()) {
    if (!refused && r.committing) return;
    HeldItem item = std::move(r.held.front());
    r.held.pop_front();
    if (refused) {
      {
        std::lock_guard lock(mu_);
        ++(item.ping ? stats_.pings_refused : stats_.results_dropped);
      }
      note_drop(name, item.ping ? "ping" : "result");
      if (item.done) item.done(make_error("store.unavailable", "the store refuses writes"));
      continue;
    }
    if (item.ping) {
      on_ping(name, std::move(*item.ping), std::move(item.done));
    } else {
      apply(r, *item.result, item.history);
    }
  }
}

void Engine::note_drop(const std::string& name, const char* what) {
  if (auto events = drop_log_.admit(clock_.monotonic_time())) {
    spdlog::warn(
        "monitor {}: a {} was refused because its last state change is not stored yet ({} refused since "
        "the last report)",
        name, what, *events);
  }
}

void Engine::abandon_change(Runtime& r) {
  if (!r.committing) return;
  r.committing.reset();  // cancels its retry; its answer, should it come, matches no change
  leave_io(r.config->name);
  {
    std::lock_guard lock(mu_);
    --stats_.changes_waiting;
  }
  release_held(r, /*refused=*/true);
}

}  // namespace trainwatch::engine
