#include "storage/write_queue.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>
#include <utility>

namespace trainwatch {
namespace {

// The engine's own bookkeeping: nobody waits on its commit.
bool is_background(const WriteOp& op) {
  if (const auto* r = std::get_if<RecordResult>(&op)) return r->outbox.empty();
  return std::holds_alternative<SaveState>(op) || std::holds_alternative<PruneResults>(op);
}

}  // namespace

WriteQueue::WriteQueue(BatchApplier& applier, WriteQueueOptions options)
    : applier_(applier),
      options_(options),
      failure_log_(options.failure_log_interval),
      done_exception_log_(options.failure_log_interval) {
  thread_ = std::thread([this] { run(); });
}

WriteQueue::~WriteQueue() {
  {
    std::lock_guard lock(queue_mu_);
    stopping_ = true;
  }
  queue_cv_.notify_all();
  thread_.join();
}

bool WriteQueue::write(WriteOp op, WriteDone done) {
  const bool prompt = !is_background(op);
  bool wake = false;
  {
    std::unique_lock lock(queue_mu_);
    if (queue_.size() >= Store::kMaxQueuedWrites) {
      lock.unlock();
      note_queue_full();
      return false;
    }
    // The writer sleeps on an empty queue or lingers on a partial batch: it needs waking
    // for the first write, the first prompt one (which cuts a long linger) and the one
    // that fills a batch.
    wake = queue_.empty() || (prompt && prompt_queued_ == 0);
    queue_.push_back(QueuedWrite{std::move(op), std::move(done), prompt});
    wake = wake || queue_.size() == options_.max_ops_per_batch || queue_.size() == linger_until_;
    if (prompt) ++prompt_queued_;
    ++queued_seq_;
  }
  if (wake) queue_cv_.notify_one();
  return true;
}

void WriteQueue::flush() {
  std::unique_lock lock(queue_mu_);
  const uint64_t target = queued_seq_;
  ++flush_waiters_;
  queue_cv_.notify_one();
  flushed_cv_.wait(lock, [&] { return committed_seq_ >= target; });
  --flush_waiters_;
}

// The writer thread: take a batch, commit it, report, repeat; on stop, drain first.
void WriteQueue::run() {
  std::vector<QueuedWrite> batch;
  batch.reserve(options_.max_ops_per_batch);
  for (;;) {
    uint64_t last_seq = 0;
    {
      std::unique_lock lock(queue_mu_);
      const bool was_idle = prompt_queued_ == 0;
      while (!queue_cv_.wait_for(lock, options_.idle_tick, [&] { return stopping_ || !queue_.empty(); })) {
        lock.unlock();
        applier_.idle();
        lock.lock();
      }
      if (queue_.empty()) {  // stopping, and everything queued is committed
        lock.unlock();
        applier_.after_batch(/*stopping=*/true);
        return;
      }
      // A prompt write that queued during the last commit has waited for it already: its
      // batch goes now. Lingering is for a batch that starts from idle.
      const bool background = prompt_queued_ == 0;
      // A prompt batch stops lingering once as many writes are queued as the last prompt
      // batch held: under steady load those are its callers asking again (128 heartbeat
      // clients come back within a few hundred microseconds of their answers), and
      // waiting out the rest of prompt_linger for writes that are not coming capped the
      // whole store at one batch per linger (pings: 1 ms of every ~1.4 ms cycle idle).
      if (background || was_idle) {
        queue_cv_.wait_for(lock, background ? options_.background_linger : options_.prompt_linger, [&] {
          return stopping_ || flush_waiters_ > 0 || queue_.size() >= options_.max_ops_per_batch ||
                 (background && prompt_queued_ > 0) ||
                 (!background && linger_until_ > 0 && queue_.size() >= linger_until_);
        });
      }
      const size_t n = std::min(queue_.size(), options_.max_ops_per_batch);
      if (!background) linger_until_ = n;
      for (size_t i = 0; i < n; ++i) {
        if (queue_.front().prompt) --prompt_queued_;
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      // Only this thread pops, one batch at a time, so everything popped before this
      // batch is already counted in committed_seq_.
      last_seq = committed_seq_ + n;
    }
    {
      std::lock_guard lock(health_mu_);
      batch_started_ = std::chrono::steady_clock::now();
    }
    const std::vector<WriteOutcome> outcomes = applier_.apply(batch);
    {
      std::lock_guard lock(health_mu_);
      batch_started_.reset();
    }
    // Before the callbacks: a ping answered 503 finds /healthz already degraded.
    note_outcomes(batch, outcomes);
    call_done(batch, outcomes);
    batch.clear();
    {
      std::lock_guard lock(queue_mu_);
      committed_seq_ = last_seq;
    }
    flushed_cv_.notify_all();
    applier_.after_batch(/*stopping=*/false);
  }
}

void WriteQueue::call_done(const std::vector<QueuedWrite>& batch, const std::vector<WriteOutcome>& outcomes) {
  for (size_t i = 0; i < batch.size(); ++i) {
    if (!batch[i].done) continue;
    // A done must not throw; if one does, the writer still has to serve the rest.
    try {
      batch[i].done(outcomes[i].status);
    } catch (const std::exception& e) {
      note_done_exception(e.what());
    } catch (...) {
      note_done_exception("an exception that is not a std::exception");
    }
  }
}

void WriteQueue::note_done_exception(const char* what) {
  {
    std::lock_guard lock(health_mu_);
    ++health_.done_exceptions;
  }
  if (auto events = done_exception_log_.admit(std::chrono::steady_clock::now())) {
    spdlog::error("store: {} write callback(s) threw since the last report (a bug; the writer goes on): {}",
                  *events, what);
  }
}

void WriteQueue::note_outcomes(const std::vector<QueuedWrite>& batch,
                               const std::vector<WriteOutcome>& outcomes) {
  const WriteOutcome* failed = nullptr;
  uint64_t failures = 0;
  bool committed = false;
  bool was_refusing = false;
  bool refusing = false;
  {
    std::lock_guard lock(health_mu_);
    for (size_t i = 0; i < outcomes.size(); ++i) {
      const WriteOutcome& o = outcomes[i];
      if (o.status.ok()) {
        committed = true;
        continue;
      }
      if (o.reason == nullptr) continue;  // the operation's own fault (not found): no store failure
      ++health_.failures_by_reason[o.reason];
      if (std::holds_alternative<RecordPing>(batch[i].op)) ++health_.failed_pings;
      if (std::holds_alternative<RecordResult>(batch[i].op)) ++health_.failed_results;
      ++failures;
      failed = &o;
    }
    was_refusing = health_.refusing;
    if (failed != nullptr) {
      const std::string_view reason = failed->reason;
      // A constraint names a caller's mistake; the store takes other writes fine.
      if (reason != "constraint") health_.refusing = true;
      health_.reason = failed->status.error().message;
    } else if (committed) {
      health_.refusing = false;
    }
    refusing = health_.refusing;
  }
  if (failed != nullptr) {
    const auto now = std::chrono::steady_clock::now();
    for (uint64_t i = 1; i < failures; ++i) (void)failure_log_.admit(now);
    if (auto events = failure_log_.admit(now)) {
      spdlog::error("store: {} write(s) did not commit since the last report ({}): {}", *events,
                    failed->reason, failed->status.error().message);
    }
  }
  if (was_refusing && !refusing) spdlog::info("store: writes commit again");
}

void WriteQueue::note_queue_full() {
  {
    std::lock_guard lock(health_mu_);
    ++health_.failures_by_reason["queue_full"];
  }
  if (auto events = failure_log_.admit(std::chrono::steady_clock::now())) {
    spdlog::error(
        "store: {} write(s) refused since the last report (queue_full): {} writes are queued already",
        *events, Store::kMaxQueuedWrites);
  }
}

WriteHealth WriteQueue::health() const {
  WriteHealth health;
  {
    std::lock_guard lock(health_mu_);
    health = health_;
    if (batch_started_) {
      health.writing_for =
          std::chrono::duration_cast<Millis>(std::chrono::steady_clock::now() - *batch_started_);
    }
  }
  std::lock_guard lock(queue_mu_);
  health.queued = queue_.size();
  return health;
}

}  // namespace trainwatch
