#include "storage/retention.h"

namespace trainwatch {

RetentionPruner::RetentionPruner(const Clock& clock, TimerFactory& timers, Store& store, Millis keep_raw)
    : clock_(clock), timer_(timers.make_timer()), store_(store), keep_raw_(keep_raw) {}

void RetentionPruner::start() { arm(); }

// A cancelled timer never calls back (core/timer.h), so nothing is queued after this.
void RetentionPruner::stop() { timer_->cancel(); }

void RetentionPruner::arm() {
  timer_->arm_after(clock_, kPruneInterval, [this] {
    // A refused write (full queue) is fine to drop: the next tick covers the same rows.
    (void)store_.write(PruneResults{clock_.system_time() - keep_raw_, kRowsPerPrune});
    (void)store_.write(PruneAudit{clock_.system_time() - keep_raw_, kRowsPerPrune});
    arm();
  });
}

}  // namespace trainwatch
