// What Engine (engine.h) keeps of each monitor, Runtime, and of a change being committed,
// PendingChange and HeldItem. Private to src/engine: only Engine's own .cc files include it.
// Threading: a Runtime's fields above "io thread only" are written and read under Engine's
// mu_ (written by the io thread, or by a quiet success ping on its caller's thread: see
// engine.h), the rest by the io thread alone.
#pragma once

#include <deque>
#include <memory>
#include <optional>

#include "engine/engine.h"
#include "engine/state_machine.h"
#include "heartbeat/rules.h"

namespace trainwatch::engine {

// Folds a quiet success (recorded off the io thread) into what readers see, through the
// state machine as apply() would: on a monitor up with no failures only the last check
// moves, but one rule for both paths keeps them from drifting apart.
inline void add_quiet_success(const CheckResult& success, int retries, MonitorState& state,
                              std::optional<CheckResult>& last_result) {
  state = next_state(state, success, retries).state;
  last_result = success;
}

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
  // A pause or resume saved the monitor's state while this change committed: that save
  // held the state before it, so the state it shows is saved again once it commits.
  bool state_saved_meanwhile = false;
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
  std::optional<SystemTime> maintenance_until;  // MonitorView's, kept by sweep_maintenance
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

}  // namespace trainwatch::engine
