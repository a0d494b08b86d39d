// Engine's control from outside: reload() of a new config, pause and resume, monitors
// added and released at runtime (auto-created jobs), and the maintenance test.
// Threading: callable from any thread; each posts its work to the io thread.
#include "engine/engine.h"

#include <boost/asio/post.hpp>

#include "engine/engine_runtime.h"
#include "engine/schedule.h"

namespace trainwatch::engine {

namespace asio = boost::asio;

void Engine::reload(const Config& config, std::function<void()> applied) {
  asio::post(io_, [this, config, applied = std::move(applied)] {
    max_in_flight_ = static_cast<size_t>(config.server.max_checks_in_flight);
    std::map<std::string, const MonitorConfig*> wanted;
    for (const auto& m : config.monitors) wanted[m.name] = &m;

    // Removed monitors: stop them and close what they left open.
    std::vector<std::string> removed;
    for (auto& [name, runtime] : monitors_) {
      if (wanted.count(name) == 0 && added_at_runtime_.count(name) == 0) removed.push_back(name);
    }
    for (const auto& [name, m] : wanted) added_at_runtime_.erase(name);
    for (const auto& name : removed) {
      std::unique_ptr<Runtime> runtime;
      {
        std::lock_guard lock(mu_);
        runtime = std::move(monitors_[name]);
        by_name_.erase(name);
        monitors_.erase(name);
        stats_.monitors = monitors_.size();
        state_changed();
      }
      runtime->timer->cancel();
      if (runtime->state.open_incident_id) {
        write(CloseIncident{*runtime->state.open_incident_id, clock_.system_time()});
      }
      if (runtime->committing) {
        // Its change may still commit: close what it opens, after it (a failed close
        // means it never committed).
        if (runtime->committing->record.opened) {
          write(CloseIncident{runtime->committing->record.opened->id, clock_.system_time()});
        }
        runtime->committing.reset();  // cancels its retry
        leave_io(name);
        std::lock_guard lock(mu_);
        --stats_.changes_waiting;
      }
      release_held(*runtime, /*refused=*/true);
    }

    const size_t count = config.monitors.size();
    for (size_t i = 0; i < count; ++i) {
      const MonitorConfig& m = config.monitors[i];
      auto it = monitors_.find(m.name);
      if (it == monitors_.end()) {
        MonitorState state;
        state.since = clock_.system_time();
        add_monitor(std::make_shared<const MonitorConfig>(m), state,
                    first_check_offset(i, count, m.interval));
        continue;
      }
      Runtime& r = *it->second;
      // The new config always goes in (its notify, notify_after, remind_every: the alert
      // planner reads them from each result's config); the schedule restarts only when
      // what is checked, or how, changed.
      const bool check_changed = !same_check(*r.config, m);
      if (check_changed) r.check_id = 0;  // a check in flight checks what is no longer asked
      {
        std::lock_guard lock(mu_);
        r.config = std::make_shared<const MonitorConfig>(m);
        bind_metrics(r);
        r.revision = next_revision_++;
        state_changed();
        if (m.type != MonitorType::kHeartbeat) r.heartbeat.reset();
      }
      if (check_changed && r.state.status != MonitorStatus::kPaused) {
        start_timer(r, first_check_offset(i, count, m.interval));
      }
    }
    if (applied) applied();
  });
}

void Engine::set_maintenance(MaintenanceTest test) {
  asio::post(io_, [this, test = std::move(test)]() mutable {
    in_maintenance_ = std::move(test);
    if (!maintenance_timer_) maintenance_timer_ = timers_.make_timer();
    sweep_maintenance();
  });
}

// Windows begin and end with the clock, not with results: a monitor checked hourly, or a
// heartbeat pinged daily, shows its window from its first second, as the alerts honour it.
void Engine::sweep_maintenance() {
  const SystemTime now = clock_.system_time();
  for (auto& [name, r] : monitors_) {
    std::optional<SystemTime> until =
        in_maintenance_ ? in_maintenance_(name, r->config->tags, now) : std::nullopt;
    if (until == r->maintenance_until) continue;
    std::lock_guard lock(mu_);
    const bool edge = until.has_value() != r->maintenance_until.has_value();
    r->maintenance_until = until;
    r->revision = next_revision_++;
    if (edge) state_changed();
  }
  maintenance_timer_->arm_after(clock_, kMaintenanceSweep, [this] { sweep_maintenance(); });
}

void Engine::set_paused(const std::string& name, bool paused, std::function<void(const Status&)> done) {
  asio::post(io_, [this, name, paused, done = std::move(done)] {
    auto it = monitors_.find(name);
    if (it == monitors_.end())
      return done(make_error("monitor.not_found", "no monitor named '" + name + "'"));
    Runtime& r = *it->second;
    if (paused != (r.state.status == MonitorStatus::kPaused)) apply_pause(r, paused);
    if (r.committing) r.committing->state_saved_meanwhile = true;
    // Answered once stored, and stored even when nothing changed (pausing a paused
    // monitor): a pause acknowledged and then lost to a crash would leave checked a monitor
    // its owner stopped, a lost resume one silent through an outage, and a pause whose
    // earlier save the store refused is in force here but stored only by asking again.
    if (!store_.write(SaveState{name, r.state}, done)) {
      {
        std::lock_guard lock(mu_);
        ++stats_.store_dropped_writes;
      }
      done(make_error("store.unavailable", "the store's write queue is full"));
    }
  });
}

void Engine::apply_pause(Runtime& r, bool paused) {
  MonitorState state = r.state;
  state.status = paused ? MonitorStatus::kPaused : MonitorStatus::kPending;
  state.since = clock_.system_time();
  state.consecutive_failures = 0;
  {
    std::lock_guard lock(mu_);
    r.state = state;
    r.revision = next_revision_++;
    state_changed();
  }
  if (paused) {
    r.timer->cancel();
    r.armed_deadline.reset();
    return;
  }
  if (r.heartbeat) {
    // A resumed heartbeat starts over: pending until its next ping, as a new one.
    std::lock_guard lock(mu_);
    r.heartbeat.emplace();
  }
  start_timer(r, Millis(0));
}

void Engine::ensure_monitor(const MonitorConfig& config) {
  asio::post(io_, [this, config] {
    if (monitors_.count(config.name) != 0) return;
    MonitorState state;
    state.since = clock_.system_time();
    if (auto it = stored_states_.find(config.name); it != stored_states_.end()) state = it->second;
    added_at_runtime_.insert(config.name);
    add_monitor(std::make_shared<const MonitorConfig>(config), state, Millis{0});
  });
}

void Engine::release_monitor(const std::string& name) {
  asio::post(io_, [this, name] {
    if (added_at_runtime_.erase(name) == 0) return;
    std::unique_ptr<Runtime> runtime;
    {
      std::lock_guard lock(mu_);
      auto it = monitors_.find(name);
      if (it == monitors_.end()) return;
      runtime = std::move(it->second);
      by_name_.erase(name);
      monitors_.erase(it);
      metrics_.by_monitor.erase(name);  // fresh job names must not grow /metrics for ever
      stats_.monitors = monitors_.size();
      state_changed();
    }
    runtime->timer->cancel();
    if (runtime->state.open_incident_id)
      write(CloseIncident{*runtime->state.open_incident_id, clock_.system_time()});
  });
}

}  // namespace trainwatch::engine
