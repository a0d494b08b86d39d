#include "engine/engine.h"

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

#include <algorithm>

#include "engine/dependencies.h"
#include "engine/schedule.h"
#include "heartbeat/rules.h"

namespace trainwatch::engine {

namespace asio = boost::asio;

namespace {

// Folds a quiet success (recorded off the io thread) into what readers see, through the
// state machine as apply() would: on a monitor up with no failures only the last check
// moves, but one rule for both paths keeps them from drifting apart.
void add_quiet_success(const CheckResult& success, int retries, MonitorState& state,
                       std::optional<CheckResult>& last_result) {
  state = next_state(state, success, retries).state;
  last_result = success;
}

}  // namespace

// A result or a ping that came while its monitor's change was committing; applied in
// order once it commits.
struct Engine::HeldItem {
  std::optional<CheckResult> result;  // a check's result or a missed deadline, or
  bool history = true;
  std::optional<Ping> ping;  // a ping, with its caller's done
  WriteDone done;
};

// A state change written to the store and not yet reported committed.
struct Engine::PendingChange {
  explicit PendingChange(std::unique_ptr<Timer> retry_timer) : retry(std::move(retry_timer)) {}
  uint64_t id = 0;      // matches the store's answer to this change, not a later one
  RecordResult record;  // written again as it is until it commits
  int attempts = 0;     // writes of it the store refused
  // Destroyed with the change: a dropped change is never retried.
  std::unique_ptr<Timer> retry;
};

struct Engine::Runtime {
  explicit Runtime(std::unique_ptr<Timer> monitor_timer) : timer(std::move(monitor_timer)) {}

  // Read by other threads under mu_.
  std::shared_ptr<const MonitorConfig> config;
  MonitorState state;
  std::optional<Incident> open_incident;
  std::optional<CheckResult> last_result;
  uint64_t revision = 0;
  std::optional<heartbeat::Track> heartbeat;  // heartbeat monitors only
  std::optional<PingRecord> last_ping;        // without its body
  std::optional<SystemTime> started_at;       // wall time of the open start, for display
  // The newest quiet success (recorded off the io thread), not yet folded into `state`
  // and `last_result`: the io thread alone writes those.
  std::optional<CheckResult> quiet_success;
  // This monitor's entries in metrics_ (map nodes do not move), so counting a result
  // looks nothing up.
  CheckCounts* counts = nullptr;
  DurationHistogram* durations = nullptr;

  // io thread only.
  // The check schedule or the heartbeat deadline. Destroyed with the Runtime, so its
  // callback may hold the Runtime by reference (a removed monitor's never runs).
  std::unique_ptr<Timer> timer;
  MonoTime due{};
  // The check whose result applies: 0 while none runs, or once a reload changed what is
  // checked (the old check's result then describes a check that is gone). Unique across
  // monitors, so a result never applies to a monitor removed and added again meanwhile.
  uint64_t check_id = 0;
  bool waiting = false;
  // The slot it waits for (at the in-flight bound), for the lateness of its start.
  MonoTime waiting_due{};
  std::optional<MonoTime> armed_deadline;     // heartbeat: when the timer fires, if armed
  std::unique_ptr<PendingChange> committing;  // see "State changes" at the top of engine.h
  std::deque<HeldItem> held;                  // at most kMaxHeldWhileCommitting
  bool owned = true;                          // checked and decided here (see Replicas in engine.h)
  // Replicas: the epoch this replica claimed the monitor under (Store::claim_monitors),
  // carried by every write it decides while it owns it; none while it does not.
  std::optional<int64_t> epoch;
};

Engine::Engine(asio::io_context& io, const Clock& clock, TimerFactory& timers, Store& store,
               CheckerSet& checkers, AlertHook* alerts)
    : io_(io), clock_(clock), timers_(timers), store_(store), checkers_(checkers), alerts_(alerts) {}

Engine::~Engine() { stop(); }

Status Engine::start(const Config& config) {
  max_in_flight_ = static_cast<size_t>(config.server.max_checks_in_flight);
  auto next_id = store_.next_incident_id();
  if (!next_id) return next_id.error();
  next_incident_id_ = *next_id;
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
  const std::string name = r.config->name;
  // The lease lapsed (or the monitor moved) since the last sync: no verdict; the sync that
  // follows lets it go, and whoever owns it then re-arms the deadline.
  if (!owned_here(name)) return;
  if (ownership_ != nullptr) catch_up_pings(r);
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
    if (refused) refused(make_error("store.full", "the store's write queue is full"));
  }
}

bool Engine::record_quiet_success(const std::string& name, const Ping& ping) {
  std::lock_guard lock(mu_);
  auto it = by_name_.find(name);
  auto pending = in_io_.find(name);
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

void Engine::leave_io(const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = in_io_.find(name);
  if (it != in_io_.end() && --it->second <= 0) in_io_.erase(it);
}

void Engine::count_result(const Runtime& r, const CheckResult& result) {
  ++(result.ok ? r.counts->success : r.counts->failure);
  r.durations->observe(result.latency_ms / 1000.0);
}

void Engine::bind_metrics(Runtime& r) {
  r.counts = &metrics_.by_monitor[r.config->name];
  r.durations = &metrics_.duration_by_type[std::string(to_string(r.config->type))];
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

void Engine::schedule(Runtime& r, MonoTime due) {
  r.due = due;
  r.timer->arm(due, [this, &r] { on_due(r); });
}

void Engine::on_due(Runtime& r) {
  if (r.state.status == MonitorStatus::kPaused) return;
  const MonoTime now = clock_.monotonic_time();
  start_or_queue(r, r.due);
  schedule(r, next_due_after_start(r.due, r.config->interval, now));
}

void Engine::start_or_queue(Runtime& r, MonoTime due) {
  if (!r.owned || r.check_id != 0 || r.waiting || !owned_here(r.config->name)) return;
  if (stats_.checks_in_flight < max_in_flight_) return start_check(r, due);
  r.waiting = true;
  r.waiting_due = due;
  waiting_.push_back(r.config->name);
  std::lock_guard lock(mu_);
  stats_.checks_waiting = waiting_.size();
}

void Engine::start_check(Runtime& r, MonoTime due) {
  checks::Checker* checker = checkers_.for_type(r.config->type);
  // Asked again at the start: the lease may have lapsed while it waited for a free slot.
  if (checker == nullptr || !r.owned || !owned_here(r.config->name)) return;
  r.check_id = next_check_id_++;
  const double late_ms = std::chrono::duration<double, std::milli>(clock_.monotonic_time() - due).count();
  {
    std::lock_guard lock(mu_);
    ++stats_.checks_in_flight;
    ++stats_.checks_started;
    stats_.max_start_delay_ms = std::max(stats_.max_start_delay_ms, late_ms);
  }
  checker->check(r.config, [this, name = r.config->name, id = r.check_id](const CheckResult& result) {
    on_result(name, id, result);
  });
}

void Engine::on_result(const std::string& name, uint64_t check_id, const CheckResult& result) {
  {
    std::lock_guard lock(mu_);
    --stats_.checks_in_flight;
  }
  auto it = monitors_.find(name);
  // A result for a monitor that was removed or reconfigured meanwhile still frees its
  // slot above, but is not applied.
  if (it != monitors_.end() && it->second->check_id == check_id) {
    Runtime& r = *it->second;
    r.check_id = 0;
    // A check that was in flight when the monitor was paused does not unpause it. One in
    // flight when the lease lapsed (a pause of the whole process) describes a moment this
    // replica may no longer decide about.
    if (r.state.status != MonitorStatus::kPaused && owned_here(name)) apply(r, result);
  }
  start_waiting_checks();
}

void Engine::start_waiting_checks() {
  while (!waiting_.empty() && stats_.checks_in_flight < max_in_flight_) {
    std::string name = std::move(waiting_.front());
    waiting_.pop_front();
    auto it = monitors_.find(name);
    if (it == monitors_.end()) continue;  // removed by a reload while it waited
    Runtime& r = *it->second;
    r.waiting = false;
    if (r.check_id == 0) start_check(r, r.waiting_due);
  }
  std::lock_guard lock(mu_);
  stats_.checks_waiting = waiting_.size();
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
  record.in_maintenance = in_maintenance_ && in_maintenance_(r.config->name, r.config->tags, result.at);
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
  PendingChange& c = *r.committing;
  const std::string_view to = to_string(c.record.state.status);
  // Not retried once this replica stopped owning the monitor (its lease lapsed, or the
  // monitor moved): it would be written under an epoch that is no longer its own.
  const bool stale = ownership_ != nullptr && (!r.owned || !owned_here(name));
  if (!status && status.error().code == "store.unavailable" && !stale) {
    ++c.attempts;
    // 100 ms, 200 ms, ... 5 s: a disk that frees up is noticed within 5 s, and a full one
    // costs one write of this change per 5 s.
    const auto delay = std::min<std::chrono::milliseconds>(
        kCommitRetryMax, kCommitRetryFirst * (1LL << std::min(c.attempts - 1, 10)));
    if (auto events = retry_log_.admit(clock_.monotonic_time())) {
      spdlog::warn(
          "monitor {}: its change to {} is not stored yet ({}); retrying in {} ms ({} refused write(s) "
          "of state changes since the last report)",
          name, to, status.error().message, delay.count(), *events);
    }
    release_held(r, /*refused=*/true);
    // The timer belongs to this change: it fires only while the change is still committing.
    c.retry->arm_after(clock_, delay, [this, &r] { try_commit(r); });
    return;
  }
  std::unique_ptr<PendingChange> change = std::move(r.committing);
  RecordResult& record = change->record;
  if (status) {
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
    // The pause's own save may have committed before this change: the pause wins.
    if (paused) write(SaveState{name, next});
    if (change->attempts > 0) {
      spdlog::info("monitor {}: its change to {} is stored, after {} refused write(s)", name, to,
                   change->attempts);
    }
    if (!record.outbox.empty() && alerts_ != nullptr) alerts_->committed();
  } else if (status.error().code == "store.fenced" || (stale && status.error().code == "store.unavailable")) {
    spdlog::warn("monitor {}: its change to {} is dropped: {}", name, to,
                 stale ? "this replica no longer owns the monitor" : status.error().message);
    {
      std::lock_guard lock(mu_);
      --stats_.changes_waiting;
      ++stats_.results_dropped;
    }
    leave_io(name);
    release_held(r, /*refused=*/true);
    if (record.epoch) on_fenced(r, *record.epoch);
    return;
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

bool Engine::is_down(const std::string& name) const {
  auto it = monitors_.find(name);
  return it != monitors_.end() && it->second->state.status == MonitorStatus::kDown;
}

void Engine::write(WriteOp op, WriteDone done) {
  if (store_.write(std::move(op), std::move(done))) return;
  std::lock_guard lock(mu_);
  ++stats_.store_dropped_writes;
}

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
  asio::post(io_, [this, test = std::move(test)]() mutable { in_maintenance_ = std::move(test); });
}

void Engine::set_paused(const std::string& name, bool paused, std::function<void(bool found)> done) {
  asio::post(io_, [this, name, paused, done = std::move(done)] {
    auto it = monitors_.find(name);
    if (it == monitors_.end()) return done(false);
    Runtime& r = *it->second;
    const bool is_paused = r.state.status == MonitorStatus::kPaused;
    if (paused == is_paused) return done(true);
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
    } else {
      if (r.heartbeat) {
        // A resumed heartbeat starts over: pending until its next ping, as a new one.
        std::lock_guard lock(mu_);
        r.heartbeat.emplace();
      }
      start_timer(r, Millis(0));
    }
    write(SaveState{name, state});
    done(true);
  });
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
      if (!r.owned || paused_here != paused_there) follow_stored(r, it->second);
    }
    it = to_follow_.erase(it);
  }
  std::vector<Runtime*> taking;
  std::vector<std::string> names;
  for (auto& [name, runtime] : monitors_) {
    Runtime& r = *runtime;
    const bool owns = ownership_->owns(name);
    if (owns && !r.owned) {
      taking.push_back(&r);
      names.push_back(name);
    } else if (!owns && r.owned) {
      let_go(r);
    }
  }
  if (!taking.empty()) claim_and_take_over(taking, names);
  size_t owned = 0;
  for (const auto& [name, runtime] : monitors_) owned += runtime->owned ? 1 : 0;
  std::lock_guard lock(mu_);
  stats_.owned = owned;
}

void Engine::claim_and_take_over(const std::vector<Runtime*>& taking, const std::vector<std::string>& names) {
  // One statement for all of them: each one's epoch grows, so whatever another replica
  // still decides about them under its claim is refused by the store (fence.h).
  auto epochs = store_.claim_monitors(ownership_->member_id(), names);
  if (!epochs) {
    // Not taken: the next beat tries again. Checking them unclaimed would let the replica
    // that held them before write over this one's results.
    if (auto events = follow_log_.admit(clock_.monotonic_time())) {
      spdlog::warn("replicas: cannot claim {} monitor(s) ({} time(s) since the last report): {}",
                   names.size(), *events, epochs.error().message);
    }
    return;
  }
  size_t taken = 0;
  for (Runtime* r : taking) {
    auto epoch = epochs->find(r->config->name);
    if (epoch == epochs->end()) continue;
    r->epoch = epoch->second;
    take_over(*r);  // from the stored state it followed while another owned it
    ++taken;
  }
  spdlog::info("replicas: took over {} monitor(s)", taken);
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

int64_t Engine::new_incident_id() {
  if (ownership_ == nullptr) return next_incident_id_++;
  // Replicas number incidents from blocks the store hands out to one of them each.
  if (reserved_ids_.first >= reserved_ids_.second) {
    auto first = store_.reserve_incident_ids(kReservedIncidentIds);
    if (!first) {
      // The change it numbers cannot commit either while the store refuses; a local id
      // keeps the engine going, and the commit's compare-and-set keeps the monitor right.
      spdlog::warn("replicas: cannot reserve incident ids: {}", first.error().message);
      return next_incident_id_++;
    }
    reserved_ids_ = {*first, *first + kReservedIncidentIds};
  }
  return reserved_ids_.first++;
}

void Engine::take_over(Runtime& r) {
  r.owned = true;
  if (r.state.status == MonitorStatus::kPaused) return;
  if (r.config->type != MonitorType::kHeartbeat) {
    // Its checks keep this replica's slots, which ran while another owned it: they are
    // spread like every monitor's first checks. Starting every monitor taken over at the
    // same moment instead would make them due together at every interval, for good.
    // None before kHandoverGap: the replica that held it may check it until its own next
    // beat, a beat from now at most (its writes are fenced, its checks are not).
    const MonoTime now = clock_.monotonic_time();
    const MonoTime earliest = now + kHandoverGap;
    const Millis interval = r.config->interval;
    if (r.due < earliest) schedule(r, next_due(r.due, interval, earliest));
    // The last owner's slots, which it may keep until it lets go: a slot it missed means it
    // stopped (it died), and the check comes right after the gap; else the first check is
    // at its first slot past the gap, or at this replica's slot if that comes first and
    // half an interval after the last owner's slot before. So no two replicas check it
    // within half an interval at a handover, and no monitor waits much longer than an
    // interval between two checks when its owner died.
    if (!r.state.last_check) return;
    const auto since = std::chrono::duration_cast<Millis>(clock_.system_time() - *r.state.last_check);
    if (since >= 2 * interval + kTakeoverWindow) return;  // unchecked since the whole installation stopped
    MonoTime theirs = now + (interval - since);
    if (theirs <= now) {
      theirs = earliest;
    } else if (theirs < earliest) {
      theirs = next_due(theirs, interval, earliest);
    }
    if (r.due <= theirs && r.due - (theirs - interval) >= interval / 2) return;  // this replica's slot
    r.timer->arm(theirs, [this, &r, theirs] {
      start_or_queue(r, theirs);
      // This replica's next slot, unless it comes within half an interval of that check.
      const Millis every = r.config->interval;
      const MonoTime mine = r.due > theirs ? r.due : next_due(r.due, every, theirs);
      schedule(r, mine - theirs < every / 2 ? mine + every : mine);
    });
    return;
  }
  auto marks = store_.heartbeat_marks(r.config->name);
  if (!marks) {
    spdlog::warn("monitor {}: taken over without its pings ({}): its deadline counts from now",
                 r.config->name, marks.error().message);
    return start_timer(r, Millis(0));
  }
  {
    std::lock_guard lock(mu_);
    r.heartbeat = heartbeat::restore_track(std::get<HeartbeatSpec>(r.config->spec), *marks, r.state,
                                           clock_.system_time(), clock_.monotonic_time());
    r.last_ping = marks->last_ping;
    if (r.last_ping) r.last_ping->ping.body.clear();
    r.started_at = marks->open_start;
    r.revision = next_revision_++;
  }
  r.timer->cancel();
  r.armed_deadline.reset();
  // A finish stored after the stored state was decided (pinged to any replica while no
  // one had claimed the monitor yet, as at a start) has not moved the state: it is
  // applied now, as catch_up_pings applies one at a deadline.
  const auto& last_finish = marks->last_finish;
  if (last_finish && (!r.state.last_check || last_finish->ping.at > *r.state.last_check)) {
    {
      std::lock_guard lock(mu_);
      r.heartbeat->last_finish_at.reset();
    }
    catch_up_pings(r);
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
  }
}

void Engine::follow_stored(Runtime& r, const MonitorState& stored) {
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
    } else if (auto read = store_.incident(*stored.open_incident_id); read && *read) {
      incident = **read;
    }
  }
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

void Engine::follow_stored_now(Runtime& r) {
  auto stored = store_.state_of(r.config->name);
  if (!stored || !*stored) return;  // the state it changed comes with a later beat's states
  follow_stored(r, **stored);
}

void Engine::on_nudge(const std::string& monitor) {
  asio::post(io_, [this, monitor] {
    auto it = monitors_.find(monitor);
    if (it == monitors_.end()) return;
    Runtime& r = *it->second;
    if (!r.owned || !r.heartbeat || r.state.status == MonitorStatus::kPaused) return;
    catch_up_pings(r);
    arm_deadline(r);
  });
}

void Engine::catch_up_pings(Runtime& r) {
  auto marks = store_.heartbeat_marks(r.config->name);
  if (!marks) return;
  const auto& spec = std::get<HeartbeatSpec>(r.config->spec);
  // As if it had come here, at the time it came (stored to the millisecond: a ping of
  // this replica's own reads as no newer than itself).
  auto replay = [&](const Ping& ping) {
    heartbeat::PingEffect effect;
    {
      std::lock_guard lock(mu_);
      const MonoTime arrived = clock_.monotonic_time() - (clock_.system_time() - ping.at);
      effect = heartbeat::on_ping(spec, *r.heartbeat, ping, arrived);
      if (ping.kind == PingKind::kStart) r.started_at = ping.at;
      if (is_finish(ping.kind)) r.started_at.reset();
      if (marks->last_ping && (!r.last_ping || r.last_ping->ping.at < marks->last_ping->ping.at)) {
        r.last_ping = marks->last_ping;
        r.last_ping->ping.body.clear();
      }
      r.revision = next_revision_++;
    }
    if (effect.result) apply(r, *effect.result, /*history=*/false);
  };
  if (marks->last_finish) {
    const Ping& finish = marks->last_finish->ping;
    if (!r.heartbeat->last_finish_at || finish.at > *r.heartbeat->last_finish_at) replay(finish);
  }
  // A start after that finish (an open run), newer than the one known here.
  if (marks->open_start && (!r.started_at || *marks->open_start - *r.started_at >= Millis(1))) {
    Ping start;
    start.kind = PingKind::kStart;
    start.at = *marks->open_start;
    replay(start);
  }
}

void Engine::stop() {
  std::lock_guard lock(mu_);
  for (auto& [name, runtime] : monitors_) {
    runtime->timer->cancel();
    if (runtime->committing) runtime->committing->retry->cancel();
  }
}

std::vector<MonitorView> Engine::monitors() const {
  std::lock_guard lock(mu_);
  std::vector<MonitorView> views;
  views.reserve(monitors_.size());
  for (const auto& [name, r] : monitors_) views.push_back(view_of(*r));
  return views;
}

MonitorListDelta Engine::monitors_since(uint64_t since) const {
  MonitorListDelta delta;
  std::lock_guard lock(mu_);
  delta.revision = next_revision_ - 1;
  delta.names.reserve(monitors_.size());
  for (const auto& [name, r] : monitors_) {
    delta.names.push_back(name);
    if (r->revision > since) delta.changed.push_back(view_of(*r));
  }
  return delta;
}

std::optional<MonitorView> Engine::monitor(const std::string& name) const {
  std::lock_guard lock(mu_);
  auto it = monitors_.find(name);
  if (it == monitors_.end()) return std::nullopt;
  return view_of(*it->second);
}

MonitorView Engine::view_of(const Runtime& r) const {
  MonitorView view{r.config, r.state, r.open_incident, r.last_result, r.revision, std::nullopt};
  if (r.quiet_success) add_quiet_success(*r.quiet_success, r.config->retries, view.state, view.last_result);
  if (r.heartbeat) {
    const auto& spec = std::get<HeartbeatSpec>(r.config->spec);
    HeartbeatView hb;
    hb.last_ping = r.last_ping;
    hb.open_start = r.started_at;
    hb.late = r.state.status == MonitorStatus::kUp &&
              heartbeat::is_late(spec, *r.heartbeat, clock_.monotonic_time());
    hb.next_expected = r.heartbeat->due_at;
    view.heartbeat = std::move(hb);
  }
  return view;
}

std::vector<std::string> Engine::down_dependents(const std::string& parent) const {
  std::vector<std::string> out;
  std::lock_guard lock(mu_);
  for (const auto& [name, r] : monitors_) {
    const auto& deps = r->config->depends_on;
    if (r->state.status == MonitorStatus::kDown && std::find(deps.begin(), deps.end(), parent) != deps.end())
      out.push_back(name);
  }
  return out;
}

EngineStats Engine::stats() const {
  std::lock_guard lock(mu_);
  EngineStats stats = stats_;
  if (ownership_ == nullptr) stats.owned = stats.monitors;
  return stats;
}

CheckMetrics Engine::metrics() const {
  std::lock_guard lock(mu_);
  return metrics_;
}

}  // namespace trainwatch::engine
