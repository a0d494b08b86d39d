// Engine's check scheduling: each checked monitor's timer, the max_checks_in_flight bound
// and the FIFO of monitors due while it is reached, and each check's result on its way to
// apply(). The slot arithmetic is schedule.h's.
// Threading: io thread only (stats_ is written under mu_ for readers).
#include "engine/engine.h"

#include <algorithm>

#include "engine/engine_runtime.h"
#include "engine/schedule.h"

namespace trainwatch::engine {

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
  checker->check(r.config, checks::CheckDone([this, name = r.config->name, id = r.check_id](
                                                 const CheckResult& result) { on_result(name, id, result); },
                                             // Asked again just before the first packet (checker.h).
                                             [this, name = r.config->name] { return owned_here(name); }));
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
    // One not started (the lease lapsed before its first packet) says nothing of the
    // monitor, even should a beat have renewed the lease since.
    // A pending result (a job no rank of which has reported) has nothing to judge yet: the
    // monitor stays as it is, `pending` from its start until a first real result.
    if (r.state.status != MonitorStatus::kPaused && owned_here(name) && !result.not_started &&
        !result.pending)
      apply(r, result);
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

}  // namespace trainwatch::engine
