// Engine: runs every monitor's checks on schedule, turns results into state through the
// state machine, opens and closes incidents, and persists all of it through the Store.
//
// Threading: everything that changes a monitor runs on the io_context given to the
// constructor (one thread), which also drives the TimerFactory: the engine waits (check
// schedule, heartbeat deadlines, commit retries) only through its timers. Readers on
// other threads (the API) call monitors()/monitor()/stats(), which copy under `mu_`; the
// io thread holds `mu_` only while it writes a monitor's fields, never across a check or
// a store call.
//
// Bounds: at most server.max_checks_in_flight checks run at once; a monitor that becomes
// due while the bound is reached waits in a FIFO (at most one entry per monitor). If the
// store's write queue is full, the result is dropped and counted
// (trainwatch_store_dropped_writes_total); the in-memory state stays right.
//
// State changes are applied only once committed. A result that changes a monitor's
// status, opens or closes an incident, or causes a notification is written as one
// RecordResult (incident, state and outbox rows together); readers keep seeing the state
// before it until the store reports the commit. Meanwhile (normally about a millisecond)
// the monitor's next results and pings wait behind it, at most kMaxHeldWhileCommitting. If
// the store refuses the write for a passing reason (a full disk), the same write is tried
// again after kCommitRetryFirst, doubling up to kCommitRetryMax, until it commits: an alert
// whose change was decided is never lost while the process lives, and a restart decides
// it again from the stored state. While it is refused, that monitor's new results are
// dropped and its pings answered "store.unavailable" (503), both counted and logged at
// most once per kDropLogInterval. A write that fails for good (a constraint) is dropped
// and logged; the next result decides the change again.
//
// Heartbeat monitors run no checks: each has a deadline timer (heartbeat/rules.h) armed
// from its pings, and a finish ping or a missed deadline is a result that goes through
// apply() like a check's. After a restart the deadlines are rebuilt from the stored pings.
// One exception to "everything on the io thread": a success ping that changes nothing but
// the monitor's track (up, already awaiting a finish, no start open, nothing of it queued
// on the io thread) is recorded under `mu_` on the caller's thread and goes straight to
// the store. That is nearly every ping, and the hop through the io thread cost a fifth of
// the ping rate (bench/RESULTS.md, heartbeat pings).
//
// Replicas (an Ownership given): every replica holds every monitor, but checks, arms
// deadlines and changes the state of only those it owns. sync_ownership() hands monitors
// over when the owners changed: one taken over starts from its stored state (an incident
// its old owner opened stays open, and is closed by its new owner) and is checked at
// once. Monitors others own show their stored state, read again at every sync. A ping
// for a monitor owned elsewhere is stored and acknowledged here, and read by the owner
// from the store before it decides that a deadline passed, or at once when it changes
// the state (the store nudges the owner: on_nudge).
//
// Fencing (storage/postgres/fence.h): a monitor is owned here only once this replica
// claimed it in the store (Store::claim_monitors), and every write decided while owning it
// carries that claim's epoch. A write the store refuses as fenced (another replica claimed
// the monitor since) is dropped, never retried, and the monitor let go and its stored
// state read; the next sync claims it again if this replica still owns it. The lease
// (Ownership::owns is false once it lapsed) is asked again before every check, verdict
// and retry, and a new Ownership::term lets go of everything and reads every state again.
//
// Files (Engine's members by job; the private section below is grouped the same way):
//   engine.cc            construction, start() and stop(), adding a monitor and arming its
//                        timer, apply(): a result through the state machine into a state
//                        change, incidents and alerts
//   engine_checks.cc     the check schedule, the in-flight bound and its FIFO, check results
//   engine_commit.cc     commit-gated changes: commit, retry, what is held meanwhile
//   engine_heartbeat.cc  pings (the quiet path and the io thread's) and deadline timers
//   engine_replicas.cc   sync_ownership(): claim and take over, let go, fencing, following
//                        stored states, nudges and the pings other replicas stored
//   engine_control.cc    reload(), pause and resume, monitors added and released at runtime
//   engine_views.cc      the readers: monitors(), monitors_since(), stats(), metrics()
//   engine_runtime.h     Runtime (a monitor's record), PendingChange, HeldItem
// and its helpers, each with its own header: state_machine.h (next state), schedule.h
// (check slots, handovers), incident_ids.h (incident numbering), dependencies.h.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "checks/checker.h"
#include "config/config.h"
#include "core/clock.h"
#include "core/log_throttle.h"
#include "core/model.h"
#include "core/ping.h"
#include "core/timer.h"
#include "engine/alert_hook.h"
#include "engine/incident_ids.h"
#include "engine/metrics.h"
#include "engine/ownership.h"
#include "engine/state_machine.h"
#include "heartbeat/ping_sink.h"
#include "storage/store.h"

namespace trainwatch::engine {

// What readers see of a heartbeat monitor's pings.
struct HeartbeatView {
  std::optional<PingRecord> last_ping;   // without its body (bodies stay in the store)
  std::optional<SystemTime> open_start;  // a start with no finish yet
  bool late = false;                     // past the due time, within grace
  // When the next finish is (or was, if it is late or missed) due: a period after the
  // last success, or a schedule's next fire time. Moves only with pings and reloads.
  std::optional<SystemTime> next_expected;
};

// What readers see of one monitor.
struct MonitorView {
  std::shared_ptr<const MonitorConfig> config;
  MonitorState state;
  std::optional<Incident> open_incident;
  std::optional<CheckResult> last_result;
  // Changes whenever anything above changes, and is never reused by another monitor or
  // after a reload: readers may cache what they derive from a view by (name, revision).
  uint64_t revision = 0;
  // Heartbeat monitors only. Every ping moves `revision`; `late` follows the clock and
  // does not (nothing cached from a view shows it).
  std::optional<HeartbeatView> heartbeat;
  // Inside a maintenance window (set_maintenance): when the windows covering it end.
  // Entering and leaving one moves `revision` and state_generation(), within
  // kMaintenanceSweep of the window's edge.
  std::optional<SystemTime> maintenance_until;
};

// What changed in the monitor list since a revision a reader saw before.
struct MonitorListDelta {
  uint64_t revision = 0;             // pass back as `since` next time
  std::vector<std::string> names;    // every monitor, in list order
  std::vector<MonitorView> changed;  // monitors whose revision is above `since`
};

struct EngineStats {
  size_t monitors = 0;
  size_t checks_in_flight = 0;
  size_t checks_waiting = 0;
  uint64_t checks_started = 0;
  uint64_t store_dropped_writes = 0;
  size_t changes_waiting = 0;     // state changes written and not yet committed
  uint64_t results_dropped = 0;   // results not applied: their monitor's change was refused
  uint64_t pings_refused = 0;     // pings answered 503 for the same reason, or a full queue
  double max_start_delay_ms = 0;  // worst lateness of a check start against its due time
  size_t owned = 0;               // monitors this process checks: all of them, but on replicas
};

// Chooses the checker for a monitor type; nullptr for types the engine does not run.
class CheckerSet {
 public:
  virtual ~CheckerSet() = default;
  virtual checks::Checker* for_type(MonitorType type) = 0;
};

class Engine final : public heartbeat::PingSink {
 public:
  // `timers` must be driven by the thread that runs `io`. `alerts` (optional, must
  // outlive the engine) turns applied results into outbox rows.
  Engine(boost::asio::io_context& io, const Clock& clock, TimerFactory& timers, Store& store,
         CheckerSet& checkers, AlertHook* alerts = nullptr);
  ~Engine() override;

  // Loads stored state (an incident open before a restart stays open) and schedules
  // every monitor. Call once, before the io_context runs.
  Status start(const Config& config);

  // Applies a new config on the io thread: monitors whose check is unchanged keep their
  // state and schedule; changed ones keep their state and are rescheduled (the result of
  // a check of the old config still running is not applied); removed ones stop and close
  // their open incident. `applied`, when given, runs on the io thread once the new set is
  // in place (an API write answers then, so its redirect finds the monitor).
  void reload(const Config& config, std::function<void()> applied = {});

  // Pauses or resumes one monitor on the io thread. A paused monitor is not checked, its
  // state reads paused (kept across restarts and reloads) and its open incident stays
  // open; resuming makes it pending and checks it at once. `done` gets Ok once the state
  // is committed (on the store's writer thread), "monitor.not_found", or the store's
  // refusal ("store.*": the change is in force here but not stored; asking again stores
  // it). Pausing a paused monitor (or resuming a running one) changes nothing but is
  // stored and answered all the same: so its audit row, queued before, is committed too.
  void set_paused(const std::string& name, bool paused, std::function<void(const Status&)> done);
  // Adds a monitor that no config file declares (a job created by its first report under
  // jobs.auto_create), on the io thread; nothing happens when one of that name exists. It
  // keeps the state stored under its name (an incident open before a restart stays open)
  // and survives reloads until a config declares a monitor of the same name.
  void ensure_monitor(const MonitorConfig& config);
  // Removes a monitor that ensure_monitor added (an auto-created job released after
  // jobs.expire_after), on the io thread, as a reload removes one: its timer stops and its
  // open incident closes. A monitor a config declares, or none of that name, is left alone.
  void release_monitor(const std::string& name);

  // Shares the monitors with other replicas: this engine runs only those `ownership`
  // owns (it must outlive the engine). Call before start().
  void set_ownership(const Ownership* ownership) { ownership_ = ownership; }

  // Whether a monitor (its name and tags) is inside a maintenance window at a time: when
  // the windows covering it end, or nullopt.
  using MaintenanceTest = std::function<std::optional<SystemTime>(
      const std::string& monitor, const std::vector<std::string>& tags, SystemTime at)>;
  // From any thread: the test that marks results decided inside a window
  // (RecordResult.in_maintenance), in place on the io thread from the next result on, and
  // that readers see as MonitorView::maintenance_until: the io thread asks it for every
  // monitor every kMaintenanceSweep (its cost: monitors x windows tests a sweep). The
  // windows change with reloads and the API (catalog/maintenance_catalog.h); none: no
  // result is in maintenance.
  void set_maintenance(MaintenanceTest test);
  static constexpr Millis kMaintenanceSweep{1'000};
  // On the io thread: takes over the monitors this replica owns now and did not, lets go
  // of those it no longer owns, and reads the stored state of the others for readers.
  // One read of the stored states changed since the last sync, on the caller's thread;
  // called after each beat of the replica set, from its thread.
  void sync_ownership();

  // From any thread: another replica stored a ping for `monitor` that its owner must act
  // on now (a nudge: cluster/replica_set.h). If this replica owns it, it reads the pings
  // from the store on the io thread, as it does at a deadline.
  void on_nudge(const std::string& monitor);

  // Stops every timer; checks in flight are abandoned. Call on the io thread or after it stopped.
  void stop();

  // Records a ping for heartbeat monitor `name`: a finish is applied as a result, the
  // deadline moves, and the ping is queued to the store after any state it changed (on the
  // io thread, or on the caller's for a quiet success: see the top of this file). `done`
  // gets the ping's commit status (from the store's writer thread), or an error at once:
  // "engine.not_heartbeat" for an unknown or non-heartbeat monitor, "store.full" when the
  // store's queue is full.
  void record_ping(std::string name, Ping ping, WriteDone done) override;

  std::vector<MonitorView> monitors() const;
  std::optional<MonitorView> monitor(const std::string& name) const;
  // Copies only what changed since `since`: with 10,000 monitors a list request costs
  // the monitors checked since the previous one, not all of them.
  MonitorListDelta monitors_since(uint64_t since) const;
  // Moves whenever what a reader must never see stale changes: a monitor added, removed
  // or reconfigured, paused or resumed, its status, its open incident, or its failing
  // below `retries` starting or ending (a status page's banner). It moves after the
  // change is in memory, so a view built after reading it shows the change. A check's
  // latency or time moves only the monitor's `revision`.
  // Any thread; cached views (http/fresh_cache.h) are rebuilt when it moves.
  uint64_t state_generation() const { return state_generation_.load(std::memory_order_acquire); }
  EngineStats stats() const;
  CheckMetrics metrics() const;
  // The monitors that depend on `parent` (depends_on) and are DOWN now, by name: what a
  // parent's alert lists as affected. Any thread.
  std::vector<std::string> down_dependents(const std::string& parent) const;

 private:
  // Defined in engine_runtime.h, which only Engine's own .cc files include.
  struct Runtime;
  struct PendingChange;
  struct HeldItem;

  static constexpr size_t kMaxHeldWhileCommitting = 100;
  static constexpr std::chrono::milliseconds kCommitRetryFirst{100};
  static constexpr std::chrono::milliseconds kCommitRetryMax{5'000};
  static constexpr std::chrono::seconds kDropLogInterval{10};
  // How long after a missed slot a monitor taken over is still checked at once: a dead
  // owner's time to live and a beat. A monitor unchecked for longer was stopped with the
  // whole installation, and waits for its slot like every monitor at start.
  static constexpr Millis kTakeoverWindow{10'000};
  // At a takeover, the first check waits this long: the replica that held the monitor
  // stops at its next beat, at most kBeatEvery after this one's, plus the time to act on it.
  static constexpr Millis kHandoverGap{1'500};

  // engine.cc: the monitor set's records, and results into state.
  void add_monitor(std::shared_ptr<const MonitorConfig> config, MonitorState state, Millis first_offset);
  void start_timer(Runtime& runtime, Millis first_offset);
  // `history`: false for a heartbeat finish, whose ping row already is its history; a
  // success that changes nothing then writes no RecordResult (the hot path of pings).
  void apply(Runtime& runtime, const CheckResult& result, bool history = true);
  void write(WriteOp op, WriteDone done = {});
  void apply_pause(Runtime& runtime, bool paused);                       // in memory: the state, its timer
  bool is_down(const std::string& name) const;                           // io thread: its committed state
  void count_result(const Runtime& runtime, const CheckResult& result);  // call with mu_ held
  void bind_metrics(Runtime& runtime);     // call with mu_ held, whenever its config changes
  void leave_io(const std::string& name);  // a result counted in in_io_ is applied
  bool owned_here(const std::string& name) const { return ownership_ == nullptr || ownership_->owns(name); }
  int64_t new_incident_id() { return incident_ids_.next(/*shared=*/ownership_ != nullptr); }  // io thread

  // engine_checks.cc: the check schedule and the in-flight bound.
  void schedule(Runtime& runtime, MonoTime due);
  void on_due(Runtime& runtime);
  // Starts a check of an owned monitor due at `due`, or queues it when max_checks_in_flight
  // are running; nothing when one is running or queued already.
  void start_or_queue(Runtime& runtime, MonoTime due);
  // `due`: the slot the check was due in, for the lateness of its start.
  void start_check(Runtime& runtime, MonoTime due);
  void on_result(const std::string& name, uint64_t check_id, const CheckResult& result);
  void start_waiting_checks();

  // engine_commit.cc: the commit-gated path of apply().
  // Writes `record`, holds the change until it commits.
  void commit_change(Runtime& runtime, RecordResult record, const CheckResult& result);
  void try_commit(Runtime& runtime);
  void on_commit(const std::string& name, uint64_t change_id, const Status& status);
  // The store refused the change committing for a passing reason: it is written again later.
  void retry_commit(Runtime& runtime, const Error& refused);
  // The change committed: readers see it now.
  void show_committed(Runtime& runtime, const PendingChange& change);
  // The change is dropped, never retried: fenced, or this replica no longer owns the monitor.
  void drop_fenced(Runtime& runtime, const PendingChange& change, const std::string& why);
  // While `runtime` has a change committing: holds (or, once refused, drops) what comes.
  bool hold_result(Runtime& runtime, const CheckResult& result, bool history);
  bool hold_ping(Runtime& runtime, Ping& ping, WriteDone& done);
  void release_held(Runtime& runtime, bool refused);
  void note_drop(const std::string& name, const char* what);
  // Drops the change committing, if any, and what waits behind it.
  void abandon_change(Runtime& runtime);

  // engine_heartbeat.cc: pings and deadlines.
  void arm_deadline(Runtime& runtime);
  void on_deadline(Runtime& runtime);
  void on_ping(const std::string& name, Ping ping, WriteDone done);
  // The caller-thread path of record_ping; false when the ping has to go through the io
  // thread (and then counts it in in_io_).
  bool record_quiet_success(const std::string& name, const Ping& ping);
  // Queues a ping row; a full queue answers `done` with "store.full" at once.
  void write_ping(RecordPing op, WriteDone done);

  // engine_replicas.cc: following the owners and the stored states.
  // `changed`: the states stored since the last sync, read under `term`.
  void follow_owners(uint64_t term, Result<StateFeed> changed);
  // Replicas: claims `taking` (their names in `names`) in the store and takes over each
  // one claimed; none when the claim fails (the next sync tries again).
  void claim_and_take_over(const std::vector<Runtime*>& taking, const std::vector<std::string>& names);
  // Starts owning a monitor just claimed, from the stored state it followed.
  // `stagger`: its place among the monitors taken over together (schedule.h).
  void take_over(Runtime& runtime, Millis stagger);
  void let_go(Runtime& runtime);
  // A write decided under `epoch` was refused: another replica claimed the monitor since.
  // What it decided is dropped (never retried), and the monitor is let go and its stored
  // state read; the next sync claims it again if this replica still owns it then.
  void on_fenced(Runtime& runtime, int64_t epoch);
  void follow_stored(Runtime& runtime, const MonitorState& stored);
  void follow_stored_now(Runtime& runtime);  // reads the store first
  // Replicas, at a heartbeat deadline: a finish ping another replica stored since this
  // one's track last moved is applied first, as if it had come here.
  void catch_up_pings(Runtime& runtime);

  // engine_control.cc: what readers see of maintenance windows, then the next sweep.
  void sweep_maintenance();

  // engine_views.cc: readers.
  MonitorView view_of(const Runtime& runtime) const;  // call with mu_ held

  // What the files above share.
  boost::asio::io_context& io_;
  const Clock& clock_;
  TimerFactory& timers_;
  Store& store_;
  CheckerSet& checkers_;
  AlertHook* alerts_ = nullptr;
  const Ownership* ownership_ = nullptr;      // null: this process owns every monitor
  MaintenanceTest in_maintenance_;            // io thread only
  std::unique_ptr<Timer> maintenance_timer_;  // sweep_maintenance; io thread only
  LogThrottle follow_log_{kDropLogInterval};
  LogThrottle fence_log_{kDropLogInterval};
  uint64_t term_ = 0;  // Ownership::term at the last sync; io thread only
  size_t max_in_flight_ = 256;
  IncidentIds incident_ids_;     // io thread only (and start())
  uint64_t next_change_id_ = 1;  // io thread only
  uint64_t next_check_id_ = 1;   // io thread only
  LogThrottle drop_log_{kDropLogInterval};
  LogThrottle retry_log_{kDropLogInterval};
  uint64_t next_revision_ = 1;  // under mu_
  // Moved under mu_, after the change it announces (state_generation()).
  std::atomic<uint64_t> state_generation_{1};
  void state_changed() { state_generation_.fetch_add(1, std::memory_order_release); }  // call with mu_ held

  mutable std::mutex mu_;  // guards monitors_ (the map and each Runtime's view fields), stats_, metrics_
  std::map<std::string, std::unique_ptr<Runtime>> monitors_;
  // monitors_ by hash, for the ping path (10,000 names cost a dozen string compares in
  // the ordered map); the keys view monitors_' own keys.
  std::unordered_map<std::string_view, Runtime*> by_name_;
  // Heartbeat results on their way through the io thread (pings posted, a missed deadline
  // being applied), by monitor name: while a monitor has any, its pings take the io path
  // too, so they apply in order. By name, not in Runtime: a reload may replace the Runtime
  // while a ping is posted.
  std::unordered_map<std::string, int> in_io_;
  EngineStats stats_;
  CheckMetrics metrics_;
  std::deque<std::string> waiting_;  // monitors due while at the bound; io thread only
  // As loaded at start, then as followed on replicas; io thread only.
  std::map<std::string, MonitorState> stored_states_;
  // Replicas: where the next states_after read starts, and the term it reads under (the
  // sync_ownership caller's only); states read but not yet followed (their monitor was
  // committing a change of its own; io thread only).
  int64_t state_cursor_ = 0;
  uint64_t read_term_ = 0;
  std::map<std::string, MonitorState> to_follow_;
  std::set<std::string> added_at_runtime_;  // by ensure_monitor; io thread only
};

}  // namespace trainwatch::engine
