// WriteQueue: the part of every Store that is not SQL. Writes go on a bounded queue; one
// writer thread lets a batch gather (group commit), hands it to the store's BatchApplier,
// which commits it as one transaction, and only then calls each operation's done. It
// counts failures by reason for write_health() and logs them throttled. A done that throws
// is a caller's bug: it is counted (WriteHealth::done_exceptions) and logged, throttled,
// and the writer goes on with the next done.
//
// Why shared: SqliteStore and postgres::PostgresStore promise the same semantics (store.h), and
// the conformance suite holds them to it; one queue keeps them from drifting apart.
//
// Lingering: a batch's first write waits for others to join it, so one commit (and one
// fsync) pays for many writes. Writes somebody waits on (a ping's 200, an API answer, an
// alert) linger up to `prompt_linger`, cut short once as many writes are queued as the
// last prompt batch held; the engine's bookkeeping (results that notify nobody, state
// saves, pruning) up to `background_linger`, cut short by a prompt write, a full batch
// or a flush().
//
// Bounds: at most Store::kMaxQueuedWrites queued (write() returns false beyond, counted
// as "queue_full"); at most `max_ops_per_batch` operations per batch.
//
// Threading: write, flush and health may be called from any thread. The applier and the
// done callbacks run on the writer thread; a done must not call flush (it would wait for
// itself). The destructor applies everything queued, then joins.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/log_throttle.h"
#include "storage/store.h"

namespace trainwatch {

struct QueuedWrite {
  WriteOp op;
  WriteDone done;
  bool prompt = true;  // somebody waits on it: see prompt_linger
};

// One operation's status; `reason` (a WriteHealth reason) when the store failed it, null
// when the operation failed on its own account (store.not_found) and the store is fine.
struct WriteOutcome {
  Status status;
  const char* reason = nullptr;
};

// Commits one batch and returns one outcome per operation, in order. Writer thread only;
// must not throw.
class BatchApplier {
 public:
  virtual ~BatchApplier() = default;
  virtual std::vector<WriteOutcome> apply(const std::vector<QueuedWrite>& batch) = 0;
  // After each batch's callbacks (`stopping`: the last call, the queue is drained).
  virtual void after_batch(bool /*stopping*/) {}
  // Each idle_tick the queue stays empty: a store looks at itself (sqlite: its files).
  virtual void idle() {}
};

struct WriteQueueOptions {
  size_t max_ops_per_batch = 1000;
  std::chrono::microseconds prompt_linger{1'000};
  std::chrono::microseconds background_linger{100'000};
  std::chrono::seconds failure_log_interval{10};
  std::chrono::milliseconds idle_tick{1'000};
};

class WriteQueue {
 public:
  // `applier` must outlive the queue. The writer thread starts here.
  WriteQueue(BatchApplier& applier, WriteQueueOptions options);
  ~WriteQueue();
  WriteQueue(const WriteQueue&) = delete;
  WriteQueue& operator=(const WriteQueue&) = delete;

  bool write(WriteOp op, WriteDone done);
  void flush();
  WriteHealth health() const;

 private:
  void run();
  // Counts a batch's failures, moves `refusing`, and logs (throttled). Writer thread.
  void note_outcomes(const std::vector<QueuedWrite>& batch, const std::vector<WriteOutcome>& outcomes);
  void note_queue_full();
  // Runs each operation's done with its outcome; one that throws is counted and logged.
  void call_done(const std::vector<QueuedWrite>& batch, const std::vector<WriteOutcome>& outcomes);
  void note_done_exception(const char* what);

  BatchApplier& applier_;
  const WriteQueueOptions options_;

  // Guards the queue and the sequence numbers. A write gets sequence `queued_seq_ + 1`;
  // `committed_seq_` is the last sequence whose batch committed (or failed) and whose done
  // callbacks have returned; flush waits for it to catch up.
  mutable std::mutex queue_mu_;         // mutable: health() reads the queue's length
  std::condition_variable queue_cv_;    // writer waits: work or stop
  std::condition_variable flushed_cv_;  // flush waits: committed_seq_ moved
  std::deque<QueuedWrite> queue_;
  uint64_t queued_seq_ = 0;
  uint64_t committed_seq_ = 0;
  size_t prompt_queued_ = 0;  // queued writes that are not background bookkeeping
  size_t flush_waiters_ = 0;  // flush() calls waiting: commit without lingering
  size_t linger_until_ = 0;   // a prompt batch lingers until this many are queued: the last one's size
  bool stopping_ = false;

  mutable std::mutex health_mu_;  // guards health_ and batch_started_
  WriteHealth health_;
  std::optional<std::chrono::steady_clock::time_point> batch_started_;  // while one is applied
  LogThrottle failure_log_;
  LogThrottle done_exception_log_;

  std::thread thread_;  // last: starts after everything above is constructed
};

}  // namespace trainwatch
