// SqliteStore: the Store on one SQLite file in WAL mode (the default storage).
//
// Writes: `write` appends to a bounded queue; one writer thread owns the only write
// connection, lets a batch gather (kPromptLinger, kBackgroundLinger), takes up to kMaxOpsPerTransaction
// operations at a time, applies them in one
// transaction with synchronous=FULL, commits, and only then calls each operation's done.
// WAL checkpoints run on their own thread (checkpointer.h), never inside a commit.
// Each operation runs under its own savepoint: an operation that fails (say, an incident
// id used twice) gets its own error and the rest of the batch still commits; a failed
// BEGIN or COMMIT gives every operation of the batch that error. The thread survives
// both and goes on with the next batch.
//
// Failures: every operation that does not commit is counted by reason in write_health()
// (SQLite's error: a full disk is "disk_full"), and logged at most once per
// kFailureLogInterval with the count and SQLite's words. Its done gets "store.unavailable"
// when the same write may succeed later (full, I/O error, read-only, busy, queue full),
// "store.write" when it cannot (a constraint, a corrupt file). write_health().refusing is
// set by such a failure and cleared by the next transaction that commits.
//
// Files: open() creates the database 0600 (SQLite gives -wal and -shm the same mode) and
// takes group and other access from files left readable by an older version.
//
// Reads: each read borrows a read-only connection from a small pool (a new one is opened
// when none is idle), so readers never wait for the writer or for each other; in WAL mode
// they see the last committed transaction.
//
// Threading: `write`, `flush` and every read may be called from any thread. Done
// callbacks run on the writer thread; they must not call `flush` (it would wait for
// itself) and should not block. The destructor commits everything queued, then joins.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "storage/log_throttle.h"
#include "storage/store.h"

namespace SQLite {
class Database;
}

namespace trainwatch {

class Checkpointer;
class PingChains;

class SqliteStore final : public Store {
 public:
  // Opens (creating if missing) the database file and migrates it to the current schema.
  // The directory must exist. Errors: "store.open" (cannot open, not a database, no WAL),
  // "store.migrate", "store.schema_too_new".
  static Result<std::unique_ptr<SqliteStore>> open(const std::string& path);

  ~SqliteStore() override;
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  bool write(WriteOp op, WriteDone done = {}) override;
  void flush() override;
  WriteHealth write_health() const override;

  Result<std::vector<StoredState>> load_states() override;
  Result<std::vector<Incident>> incidents(const IncidentQuery& query) override;
  Result<std::optional<Incident>> incident(int64_t id) override;
  Result<std::vector<CheckResult>> results(const ResultQuery& query) override;
  Result<std::vector<PingRecord>> pings(const PingQuery& query) override;
  Result<HeartbeatMarks> heartbeat_marks(const std::string& monitor) override;
  Result<std::map<std::string, std::string>> heartbeat_tokens() override;
  Result<std::vector<UptimeBucket>> uptime(const UptimeQuery& query) override;
  Result<std::map<std::string, std::vector<UptimeBucket>>> uptime_of(const std::vector<std::string>& monitors,
                                                                      const UptimeQuery& query) override;
  Result<std::vector<ApiMonitorSpec>> api_monitors() override;
  Result<std::vector<ApiWindowSpec>> api_windows() override;
  Result<int64_t> next_api_window_id() override;
  Result<int64_t> next_incident_id() override;
  Result<std::vector<Delivery>> deliveries(const DeliveryQuery& query) override;

  // Operations per transaction: one fsync pays for up to this many writes, and a done
  // waits at most this many operations' work behind it.
  static constexpr size_t kMaxOpsPerTransaction = 1000;
  // Group commit: a batch's first write waits for others to join it, so one fsync (and
  // one write of each touched page) pays for all of them. Writes somebody waits on (a
  // ping's 200, an API answer, an alert) linger kPromptLinger; the engine's bookkeeping
  // (check results that notify nobody, state saves, pruning) up to kBackgroundLinger,
  // cut short as soon as a prompt write or a flush() arrives. Measured on 2 cores: fsync
  // and its page writes were the largest single cost of checks and pings without it.
  static constexpr std::chrono::microseconds kPromptLinger{1'000};
  static constexpr std::chrono::milliseconds kBackgroundLinger{100};
  // Read queries return at most this many rows; a larger `limit` is clamped to it.
  static constexpr int kMaxRowsPerRead = 10'000;
  // Idle read connections kept open; a burst of more concurrent readers opens extra
  // connections and closes them when done.
  static constexpr size_t kMaxIdleReaders = 8;
  // How long a statement waits for a lock held by another process before failing.
  static constexpr int kBusyTimeoutMs = 5000;
  // Failed writes are logged at most once per this interval; the line counts the rest.
  static constexpr std::chrono::seconds kFailureLogInterval{10};

 private:
  struct Pending {
    WriteOp op;
    WriteDone done;
    bool prompt = true;  // somebody waits on it: see kPromptLinger
  };
  // One operation's status; `reason` (a WriteHealth reason) when the store failed it.
  struct Outcome {
    Status status;
    const char* reason = nullptr;
  };
  class Writer;

  SqliteStore(std::string path, std::unique_ptr<PingChains> chains, std::unique_ptr<Checkpointer> checkpointer,
              std::unique_ptr<Writer> writer, std::unique_ptr<SQLite::Database> reader);

  void run_writer();
  // Counts a batch's failures, moves `refusing`, and logs (throttled). Writer thread.
  void note_outcomes(const std::vector<Pending>& batch, const std::vector<Outcome>& outcomes);
  void note_queue_full();
  // Runs `query(db)` on a borrowed read connection; turns any exception into "store.read".
  template <typename T, typename Query>
  Result<T> read(const char* what, Query&& query);
  std::unique_ptr<SQLite::Database> borrow_reader();  // throws SQLite::Exception
  void return_reader(std::unique_ptr<SQLite::Database> db);

  const std::string path_;
  std::unique_ptr<PingChains> chains_;  // written by the writer, read by pings() and heartbeat_marks()
  std::unique_ptr<Checkpointer> checkpointer_;  // hooked to the writer's connection: outlives it
  std::unique_ptr<Writer> writer_;  // touched only by the writer thread once it runs

  // Guards the write queue and the sequence numbers. A write gets sequence
  // `queued_seq_ + 1`; `committed_seq_` is the last sequence whose batch committed (or
  // failed) and whose done callbacks have returned; `flush` waits for it to catch up.
  std::mutex queue_mu_;
  std::condition_variable queue_cv_;    // writer waits: work or stop
  std::condition_variable flushed_cv_;  // flush waits: committed_seq_ moved
  std::deque<Pending> queue_;
  uint64_t queued_seq_ = 0;
  uint64_t committed_seq_ = 0;
  size_t prompt_queued_ = 0;  // queued writes that are not background bookkeeping
  size_t flush_waiters_ = 0;  // flush() calls waiting: commit without lingering
  bool stopping_ = false;

  mutable std::mutex health_mu_;  // guards health_
  WriteHealth health_;
  LogThrottle failure_log_{kFailureLogInterval};

  // Guards only the idle list; connections are used outside the lock by one thread each.
  std::mutex readers_mu_;
  std::vector<std::unique_ptr<SQLite::Database>> idle_readers_;

  std::thread writer_thread_;  // last: starts after everything above is constructed
};

}  // namespace trainwatch
