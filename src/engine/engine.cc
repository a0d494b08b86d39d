// Engine's core (engine.h): construction and start, adding a monitor, arming its timer, and
// apply(): a result through the state machine into a state change, incidents and alerts,
// written through the Store (the commit-gated ones by engine_commit.cc), and stop().
// Threading: the io thread, but for start() (before it runs) and stop() (see engine.h).
#include "engine/engine.h"

#include <boost/asio/post.hpp>

#include "engine/dependencies.h"
#include "engine/engine_runtime.h"
#include "engine/schedule.h"
#include "heartbeat/rules.h"

namespace trainwatch::engine {

namespace asio = boost::asio;

Engine::Engine(asio::io_context& io, const Clock& clock, TimerFactory& timers, Store& store,
               CheckerSet& checkers, AlertHook* alerts)
    : io_(io),
      clock_(clock),
      timers_(timers),
      store_(store),
      checkers_(checkers),
      alerts_(alerts),
      incident_ids_(store) {}

Engine::~Engine() { stop(); }

Status Engine::start(const Config& config) {
  max_in_flight_ = static_cast<size_t>(config.server.max_checks_in_flight);
  if (Status loaded = incident_ids_.load(); !loaded) return loaded;
  auto stored = store_.load_states();
  if (!stored) return stored.error();
  std::map<std::string, MonitorState>& states = stored_states_;
  for (auto& s : *stored) states[s.monitor] = std::move(s.state);

  const size_t count = config.monitors.size();
  for (size_t i = 0; i < count; ++i) {
    auto monitor = std::make_shared<const MonitorConfig>(config.monitors[i]);
    MonitorState state;
    state.since = clock_.system_time();
    if (auto it = states.find(monitor->name); it != states.end()) state = it->second;
    add_monitor(monitor, state, first_check_offset(i, count, monitor->interval));
    if (const auto* spec = std::get_if<HeartbeatSpec>(&monitor->spec)) {
      auto marks = store_.heartbeat_marks(monitor->name);
      if (!marks) return marks.error();
      Runtime& r = *monitors_.at(monitor->name);
      {
        std::lock_guard lock(mu_);
        r.heartbeat =
            heartbeat::restore_track(*spec, *marks, r.state, clock_.system_time(), clock_.monotonic_time());
        r.last_ping = marks->last_ping;
        if (r.last_ping) r.last_ping->ping.body.clear();
        r.started_at = marks->open_start;
      }
      arm_deadline(r);
    }
  }
  return Ok{};
}

void Engine::add_monitor(std::shared_ptr<const MonitorConfig> config, MonitorState state,
                         Millis first_offset) {
  auto runtime = std::make_unique<Runtime>(timers_.make_timer());
  runtime->config = std::move(config);
  runtime->state = std::move(state);
  // Replicas own a monitor only once they claimed it (follow_owners), never from the start.
  runtime->owned = ownership_ == nullptr;
  if (runtime->state.open_incident_id) {
    if (auto incident = store_.incident(*runtime->state.open_incident_id); incident && *incident) {
      runtime->open_incident = **incident;
    }
  }
  Runtime& r = *runtime;
  {
    std::lock_guard lock(mu_);
    r.revision = next_revision_++;
    state_changed();
    bind_metrics(r);
    auto [it, added] = monitors_.insert_or_assign(r.config->name, std::move(runtime));
    by_name_[it->first] = &r;
    stats_.monitors = monitors_.size();
  }
  if (r.state.status != MonitorStatus::kPaused) start_timer(r, first_offset);
}

// Checked monitors start their schedule; heartbeat monitors (re)arm their deadline.
void Engine::start_timer(Runtime& r, Millis first_offset) {
  if (r.config->type != MonitorType::kHeartbeat) return schedule(r, clock_.monotonic_time() + first_offset);
  {
    // Its due time under the current spec: a new track, a resumed one or a changed spec.
    std::lock_guard lock(mu_);
    if (!r.heartbeat) r.heartbeat.emplace();
    heartbeat::reschedule(std::get<HeartbeatSpec>(r.config->spec), *r.heartbeat, clock_.system_time(),
                          clock_.monotonic_time());
    r.revision = next_revision_++;  // readers show the due time
  }
  // Whatever was armed (a check schedule, or a deadline under the old spec) is void.
  r.timer->cancel();
  r.armed_deadline.reset();
  arm_deadline(r);
}

void Engine::apply(Runtime& r, const CheckResult& result, bool history) {
  if (hold_result(r, result, history)) return;
  {
    std::lock_guard lock(mu_);
    if (r.quiet_success) add_quiet_success(*r.quiet_success, r.config->retries, r.state, r.last_result);
    r.quiet_success.reset();
  }
  StateStep step = next_state(r.state, result, r.config->retries);
  std::optional<Incident> opened;
  std::optional<CloseIncident> closed;
  if (step.transition == Transition::kChanged) {
    if (step.state.status == MonitorStatus::kDown) {
      opened = Incident{new_incident_id(), r.config->name, result.at, std::nullopt, result.cause, ""};
      opened->caused_by = explaining_parent(r.config->depends_on,
                                            [this](const std::string& parent) { return is_down(parent); });
      step.state.open_incident_id = opened->id;
    } else if (r.state.open_incident_id) {
      closed = CloseIncident{*r.state.open_incident_id, result.at};
      step.state.open_incident_id.reset();
    }
  }
  RecordResult record{r.config->name, result, step.state, {}};
  record.epoch = r.epoch;
  record.in_maintenance =
      in_maintenance_ && in_maintenance_(r.config->name, r.config->tags, result.at).has_value();
  if (alerts_ != nullptr) {
    std::optional<Incident> ended;
    if (closed && r.open_incident) {
      ended = *r.open_incident;
      ended->ended = closed->ended;
    }
    const std::optional<Incident>& open_after =
        opened ? opened : (closed ? std::optional<Incident>() : r.open_incident);
    const std::optional<Incident>& about = open_after ? open_after : ended;
    const bool explained = about && !about->caused_by.empty() && is_down(about->caused_by);
    record.outbox = alerts_->on_apply(AppliedResult{*r.config, r.state, step.state, step.transition, result,
                                                    opened, ended, open_after, explained});
  }
  // A change readers or alerts depend on is shown only once the store holds it; the
  // rest (a result that changes nothing, a failure below the retries) is bookkeeping,
  // applied at once and written in the background.
  if (opened || closed || !record.outbox.empty() || step.transition == Transition::kChanged) {
    if (opened || closed) record.expect = ExpectedState{r.state.open_incident_id};
    record.opened = std::move(opened);
    record.closed = closed;
    return commit_change(r, std::move(record), result);
  }
  {
    std::lock_guard lock(mu_);
    // A first failure below `retries`, or the success after it, turns a status page's
    // banner degraded or back (web/banner.h): readers must see it at once too.
    const bool failing_changed = (r.state.consecutive_failures > 0) != (step.state.consecutive_failures > 0);
    r.state = step.state;
    r.last_result = result;
    r.revision = next_revision_++;
    if (failing_changed) state_changed();
    count_result(r, result);
  }
  // A heartbeat's plain success writes nothing (its ping row is its history).
  if (!history && result.ok && step.transition == Transition::kUnchanged) return;
  WriteDone fenced;
  if (record.epoch) {
    fenced = [this, name = r.config->name, epoch = *record.epoch](const Status& status) {
      if (status || status.error().code != "store.fenced") return;
      asio::post(io_, [this, name, epoch] {
        if (auto it = monitors_.find(name); it != monitors_.end()) on_fenced(*it->second, epoch);
      });
    };
  }
  write(std::move(record), std::move(fenced));
}

void Engine::write(WriteOp op, WriteDone done) {
  if (store_.write(std::move(op), std::move(done))) return;
  std::lock_guard lock(mu_);
  ++stats_.store_dropped_writes;
}

bool Engine::is_down(const std::string& name) const {
  auto it = monitors_.find(name);
  return it != monitors_.end() && it->second->state.status == MonitorStatus::kDown;
}

void Engine::count_result(const Runtime& r, const CheckResult& result) {
  ++(result.ok ? r.counts->success : r.counts->failure);
  r.durations->observe(result.latency_ms / 1000.0);
}

void Engine::bind_metrics(Runtime& r) {
  r.counts = &metrics_.by_monitor[r.config->name];
  r.durations = &metrics_.duration_by_type[std::string(to_string(r.config->type))];
}

void Engine::leave_io(const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = in_io_.find(name);
  if (it != in_io_.end() && --it->second <= 0) in_io_.erase(it);
}

void Engine::stop() {
  if (maintenance_timer_) maintenance_timer_->cancel();
  std::lock_guard lock(mu_);
  for (auto& [name, runtime] : monitors_) {
    runtime->timer->cancel();
    if (runtime->committing) runtime->committing->retry->cancel();
  }
}

}  // namespace trainwatch::engine
