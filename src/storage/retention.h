// RetentionPruner: keeps raw check results, and the audit log, for `retention.raw` and
// prunes older ones, a bounded chunk at a time, through the store's ordinary write queue.
//
// Why chunks through the queue: one DELETE of a day's results (1.4 M rows at 1,000
// monitors checked every minute) would hold the writer, and every ping waiting on it,
// for seconds. A PruneResults op deletes at most kRowsPerPrune rows and sits in the queue
// like any write, so other writes wait at most one chunk's time.
//
// Bound: kRowsPerPrune rows every kPruneInterval, i.e. up to 3.6 M rows an hour, well
// above the 60,000 an hour that 1,000 monitors at one check a minute produce; a larger
// backlog (after retention.raw is shortened) drains over several hours. A full write
// queue skips a tick; the next tick tries again.
//
// Threading: runs on the thread that drives `timers` (in serve, the engine's io_context);
// start() and stop() on that thread or before it runs. After stop() no prune is queued.
#pragma once

#include <memory>

#include "core/clock.h"
#include "core/timer.h"
#include "storage/store.h"

namespace trainwatch {

class RetentionPruner {
 public:
  static constexpr int kRowsPerPrune = 10'000;
  static constexpr Millis kPruneInterval{10'000};

  RetentionPruner(const Clock& clock, TimerFactory& timers, Store& store, Millis keep_raw);

  void start();
  void stop();
  // retention.raw changed by a reload: the next prune keeps this long.
  void set_keep_raw(Millis keep_raw) { keep_raw_ = keep_raw; }

 private:
  void arm();

  const Clock& clock_;
  std::unique_ptr<Timer> timer_;
  Store& store_;
  Millis keep_raw_;
};

}  // namespace trainwatch
