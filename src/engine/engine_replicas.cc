// Engine's replicas ("Replicas" and "Fencing" in engine.h): following the owners at each
// sync (take over, let go), following the states other replicas stored, fenced writes,
// and the pings another replica stored for a monitor owned here. The reads these need
// while running are engine_reads.cc's.
// Threading: sync_ownership() on the replica set's thread (it reads the store there);
// on_nudge() on any thread; the rest on the io thread.
#include "engine/engine.h"

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

#include "engine/engine_runtime.h"
#include "engine/schedule.h"
#include "heartbeat/rules.h"

namespace trainwatch::engine {

namespace asio = boost::asio;

void Engine::sync_ownership() {
  if (ownership_ == nullptr) return;
  // The states are read here, on the caller's thread (the replica set's), never on the io
  // thread: a slow or locked table must not hold up the checks. The cursor is this
  // caller's alone; a new term reads every state again.
  const uint64_t term = ownership_->term();
  if (term != read_term_) {
    read_term_ = term;
    state_cursor_ = 0;
  }
  auto changed = store_.states_after(state_cursor_);
  if (changed) state_cursor_ = changed->next;
  asio::post(
      io_, [this, term, changed = std::move(changed)]() mutable { follow_owners(term, std::move(changed)); });
}

void Engine::follow_owners(uint64_t term, Result<StateFeed> changed) {
  if (term != term_) {
    // The lease lapsed and this replica re-joined as new: nothing it owned is its own any
    // more, and what it knew of every monitor may be stale. It lets everything go, reads
    // every stored state again, and claims what it is given from there.
    size_t released = 0;
    for (auto& [name, runtime] : monitors_) {
      if (!runtime->owned) continue;
      let_go(*runtime);
      ++released;
    }
    spdlog::warn(
        "replicas: re-joined after the lease lapsed: let go of {} monitor(s); reading every stored state",
        released);
    term_ = term;
  }
  // The states stored since the last beat: every one at the first beat, then only those
  // changed (store.h: states_after), whichever replica wrote them.
  // Unread states do not stop the owners from moving: a replica whose lease lapsed (cut
  // off, so it reads nothing) must let go of its monitors all the same, and one that takes
  // a monitor over needs the store for its claim anyway.
  if (!changed) {
    if (auto events = follow_log_.admit(clock_.monotonic_time())) {
      spdlog::warn("replicas: cannot read the stored states ({} time(s) since the last report): {}", *events,
                   changed.error().message);
    }
  } else {
    for (auto& s : changed->states) {
      stored_states_[s.monitor] = s.state;  // a monitor added here later starts from it
      to_follow_[s.monitor] = std::move(s.state);
    }
  }
  // Monitors others own show what their owner stored; one owned here follows only a pause
  // or resume asked of another replica (the store keeps a pause: store.h). A monitor with
  // a change of its own being committed follows after the commit.
  for (auto it = to_follow_.begin(); it != to_follow_.end();) {
    auto m = monitors_.find(it->first);
    if (m != monitors_.end() && m->second->committing) {
      ++it;
      continue;
    }
    if (m != monitors_.end()) {
      Runtime& r = *m->second;
      const bool paused_here = r.state.status == MonitorStatus::kPaused;
      const bool paused_there = it->second.status == MonitorStatus::kPaused;
      if (!r.owned || paused_here != paused_there) follow_stored(r, it->second, std::nullopt);
    }
    it = to_follow_.erase(it);
  }
  std::vector<std::string> taking;
  for (auto& [name, runtime] : monitors_) {
    Runtime& r = *runtime;
    const bool owns = ownership_->owns(name);
    if (owns && !r.owned && claiming_.count(name) == 0) {
      taking.push_back(name);
    } else if (!owns && r.owned) {
      let_go(r);
    }
  }
  if (!taking.empty()) claim_and_take_over(taking);
  size_t owned = 0;
  for (const auto& [name, runtime] : monitors_) owned += runtime->owned ? 1 : 0;
  std::lock_guard lock(mu_);
  stats_.owned = owned;
}

void Engine::take_over(Runtime& r, Millis stagger, const Result<HeartbeatMarks>* marks) {
  r.owned = true;
  if (r.state.status == MonitorStatus::kPaused) return;
  if (r.config->type != MonitorType::kHeartbeat) {
    // Where its checks go on: schedule.h (handover_slots).
    const MonoTime now = clock_.monotonic_time();
    std::optional<Millis> since_check;
    if (r.state.last_check) {
      since_check = std::chrono::duration_cast<Millis>(clock_.system_time() - *r.state.last_check);
    }
    const Handover rule{kHandoverGap, kTakeoverWindow, stagger, kUnseenCheck};
    const HandoverSlots slots = handover_slots(r.due, r.config->interval, now, since_check, rule);
    if (slots.mine != r.due) schedule(r, slots.mine);
    if (!slots.theirs) return;
    r.timer->arm(*slots.theirs, [this, &r, theirs = *slots.theirs] {
      start_or_queue(r, theirs);
      schedule(r, slot_after_handover(r.due, r.config->interval, theirs));
    });
    return;
  }
  if (marks == nullptr || !*marks) {
    spdlog::warn("monitor {}: taken over without its pings ({}): its deadline counts from now",
                 r.config->name, marks ? marks->error().message : "not read");
    return start_timer(r, Millis(0));
  }
  {
    std::lock_guard lock(mu_);
    r.heartbeat = heartbeat::restore_track(std::get<HeartbeatSpec>(r.config->spec), **marks, r.state,
                                           clock_.system_time(), clock_.monotonic_time());
    move_by_outages(*r.heartbeat);  // the pings refused meanwhile were refused here too
    r.last_ping = (*marks)->last_ping;
    if (r.last_ping) r.last_ping->ping.body.clear();
    r.started_at = (*marks)->open_start;
    r.revision = next_revision_++;
  }
  r.timer->cancel();
  r.armed_deadline.reset();
  // A finish stored after the stored state was decided (pinged to any replica while no
  // one had claimed the monitor yet, as at a start) has not moved the state: it is
  // applied now, as catch_up_pings applies one at a deadline.
  const auto& last_finish = (*marks)->last_finish;
  if (last_finish && (!r.state.last_check || last_finish->ping.at > *r.state.last_check)) {
    {
      std::lock_guard lock(mu_);
      r.heartbeat->last_finish_at.reset();
    }
    catch_up_pings(r, **marks);
  }
  arm_deadline(r);
}

void Engine::let_go(Runtime& r) {
  r.owned = false;
  r.epoch.reset();
  r.check_id = 0;  // a check in flight is its new owner's to make
  // A change not stored yet is never retried under a claim this replica gave up; if it
  // commits still, this replica reads it with the stored states.
  abandon_change(r);
  if (r.config->type == MonitorType::kHeartbeat) {
    r.timer->cancel();
    r.armed_deadline.reset();
    std::lock_guard lock(mu_);
    pings_unreadable_.erase(r.config->name);  // its new owner reads them now
  }
}

void Engine::on_fenced(Runtime& r, int64_t epoch) {
  // A write of an older claim of this replica's, let go of already: nothing more to do.
  if (!r.owned || r.epoch != epoch) return;
  if (auto events = fence_log_.admit(clock_.monotonic_time())) {
    spdlog::warn(
        "monitor {}: another replica claimed it since (a newer epoch): this replica lets it go and reads its "
        "stored state ({} fenced write(s) since the last report)",
        r.config->name, *events);
  }
  let_go(r);
  follow_stored_now(r);
}

void Engine::follow_stored(Runtime& r, const MonitorState& stored, const std::optional<Incident>& read) {
  const MonitorState& st = r.state;
  if (st.status == stored.status && st.since == stored.since && st.last_check == stored.last_check &&
      st.consecutive_failures == stored.consecutive_failures &&
      st.open_incident_id == stored.open_incident_id && st.last_error == stored.last_error) {
    return;
  }
  std::optional<Incident> incident;
  if (stored.open_incident_id) {
    if (r.open_incident && r.open_incident->id == *stored.open_incident_id) {
      incident = r.open_incident;
    } else if (read && read->id == *stored.open_incident_id) {
      incident = read;
    }
  }
  // An incident opened elsewhere: read off this thread, shown when it comes (engine_reads.cc).
  if (stored.open_incident_id && !incident) read_incident(r.config->name, *stored.open_incident_id);
  const bool was_paused = st.status == MonitorStatus::kPaused;
  const bool shown_changed = st.status != stored.status || st.open_incident_id != stored.open_incident_id;
  {
    std::lock_guard lock(mu_);
    r.state = stored;
    r.open_incident = std::move(incident);
    r.quiet_success.reset();
    r.revision = next_revision_++;
    if (shown_changed) state_changed();
  }
  if (!r.owned) return;
  // A pause or resume asked of another replica.
  const bool paused = stored.status == MonitorStatus::kPaused;
  if (paused && !was_paused) {
    r.timer->cancel();
    r.armed_deadline.reset();
  } else if (!paused && was_paused) {
    if (r.heartbeat) {
      std::lock_guard lock(mu_);
      r.heartbeat.emplace();
    }
    start_timer(r, Millis(0));
  }
}

void Engine::on_nudge(const std::string& monitor) {
  asio::post(io_, [this, monitor] {
    auto it = monitors_.find(monitor);
    if (it == monitors_.end()) return;
    Runtime& r = *it->second;
    if (!r.owned || !r.heartbeat || r.state.status == MonitorStatus::kPaused) return;
    read_pings(r, /*judge=*/false);
  });
}

void Engine::catch_up_pings(Runtime& r, const HeartbeatMarks& marks) {
  const auto& spec = std::get<HeartbeatSpec>(r.config->spec);
  // As if it had come here, at the time it came (stored to the millisecond: a ping of
  // this replica's own reads as no newer than itself).
  auto replay = [&](const Ping& ping) {
    heartbeat::PingEffect effect;
    {
      std::lock_guard lock(mu_);
      const MonoTime arrived = clock_.monotonic_time() - (clock_.system_time() - ping.at);
      heartbeat::Track& track = *r.heartbeat;
      effect = heartbeat::on_ping(spec, track, ping, arrived);
      // A ping that came while the store was out (held up in a locked table, read once
      // the lock went) counts from when it came, and its deadline moves by the rest of
      // that outage, as outage_ended moved the others: judged from the ping alone, a
      // heartbeat pinged all through a 20 s lock was DOWN as the lock ended.
      if (is_finish(ping.kind) && track.last_finish) track.finish_moved = outages_after(*track.last_finish);
      if (ping.kind == PingKind::kStart && track.open_start)
        track.start_moved = outages_after(*track.open_start);
      if (ping.kind == PingKind::kStart) r.started_at = ping.at;
      if (is_finish(ping.kind)) r.started_at.reset();
      if (marks.last_ping && (!r.last_ping || r.last_ping->ping.at < marks.last_ping->ping.at)) {
        r.last_ping = marks.last_ping;
        r.last_ping->ping.body.clear();
      }
      r.revision = next_revision_++;
    }
    if (effect.result) apply(r, *effect.result, /*history=*/false);
  };
  if (marks.last_finish) {
    const Ping& finish = marks.last_finish->ping;
    if (!r.heartbeat->last_finish_at || finish.at > *r.heartbeat->last_finish_at) replay(finish);
  }
  // A start after that finish (an open run), newer than the one known here.
  if (marks.open_start && (!r.started_at || *marks.open_start - *r.started_at >= Millis(1))) {
    Ping start;
    start.kind = PingKind::kStart;
    start.at = *marks.open_start;
    replay(start);
  }
}

}  // namespace trainwatch::engine
