// SqliteStore: the Store on one SQLite file in WAL mode (the default storage).
//
// Writes: the shared WriteQueue (storage/write_queue.h) gathers batches (kPromptLinger,
// kBackgroundLinger) of up to kMaxOpsPerTransaction operations; this store's writer owns
// the only write connection and applies each batch in one transaction with
// synchronous=FULL; each done runs only after the commit.
// WAL checkpoints run on their own thread (checkpointer.h), never inside a commit.
// Each operation runs under its own savepoint: an operation that fails (say, an incident
// id used twice) gets its own error and the rest of the batch still commits; a failed
// BEGIN or COMMIT gives every operation of the batch that error. The thread survives
// both and goes on with the next batch.
//
// Failures: every operation that does not commit is counted by reason in write_health()
// (SQLite's error: a full disk is "disk_full"), and logged at most once per
// kFailureLogInterval with the count and SQLite's words. Its done gets store_error::kUnavailable
// when the same write may succeed later (full, I/O error, read-only, busy, queue full),
// store_error::kWrite when it cannot (a constraint, a corrupt file). write_health().refusing is
// set by such a failure and cleared by the next transaction that commits.
//
// Vanished files: a database or WAL file unlinked (or replaced) under the store, say by a
// cleanup script, is noticed before and after each transaction and every
// kFileCheckInterval while idle (database_files.h). Then the writer copies every frame it
// committed from the WAL it still holds open into the database file (a FULL checkpoint),
// and from then on refuses every write ("file_vanished"; write_health().refusing, with
// the file named in its reason) until the server is restarted: a transaction that
// committed into a vanished file is not acknowledged. Why not reopen in place: the read
// pool and the checkpointer hold the old files too, and SQLite's shared-memory index
// describes the old WAL; a restart reopens all of them together, safely.
//
// Files: open() creates the database 0600 (SQLite gives -wal and -shm the same mode) and
// takes group and other access from files left readable by an older version.
//
// Reads: each read borrows a read-only connection from a small pool (a new one is opened
// when none is idle), so readers never wait for the writer or for each other; in WAL mode
// they see the last committed transaction.
//
// Code: sqlite_store.cc opens the store and pools the read connections; writer.h applies
// the batches; write_ops.h and write_*.cc hold each write's SQL, reads.h and read_*.cc
// each read's (grouped as in storage/postgres).
//
// Threading: `write`, `flush` and every read may be called from any thread. Done
// callbacks run on the writer thread; they must not call `flush` (it would wait for
// itself) and should not block. The destructor commits everything queued, then joins.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "storage/store.h"
#include "storage/store_errors.h"
#include "storage/write_queue.h"

namespace SQLite {
class Database;
}

namespace trainwatch::sqlite {

class Checkpointer;
class PingChains;
class Writer;

class SqliteStore final : public Store {
 public:
  // Opens (creating if missing) the database file and migrates it to the current schema.
  // The directory must exist. Errors: store_error::kOpen (cannot open, not a database, no WAL),
  // store_error::kMigrate, store_error::kSchemaTooNew.
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
  Result<std::map<int64_t, std::vector<IncidentUpdate>>> incident_updates(
      const std::vector<int64_t>& incident_ids) override;
  Result<std::vector<CheckResult>> results(const ResultQuery& query) override;
  Result<std::vector<PingRecord>> pings(const PingQuery& query) override;
  Result<HeartbeatMarks> heartbeat_marks(const std::string& monitor) override;
  Result<std::map<std::string, std::string>> heartbeat_tokens() override;
  Result<std::vector<UptimeBucket>> uptime(const UptimeQuery& query) override;
  Result<std::map<std::string, std::vector<UptimeBucket>>> uptime_of(const std::vector<std::string>& monitors,
                                                                     const UptimeQuery& query) override;
  Result<std::vector<ApiMonitorSpec>> api_monitors() override;
  Result<NodeReportFeed> node_reports_after(int64_t cursor) override;
  Result<std::vector<StoredJobMemo>> job_memos() override;
  Result<std::vector<UserRecord>> users() override;
  Result<std::vector<ApiTokenRecord>> api_tokens() override;
  Result<std::vector<AuditEntry>> audit(const AuditQuery& query) override;
  Result<std::optional<std::string>> shared_key(const std::string& name) override;
  Result<bool> alert_link_used(const std::string& id) override;
  Result<std::vector<ApiWindowSpec>> api_windows() override;
  Result<std::vector<ApiChannelSpec>> api_channels() override;
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
  // How often an idle store checks that its files are still in place; a busy one checks
  // around every transaction.
  static constexpr std::chrono::milliseconds kFileCheckInterval{1'000};

 private:
  SqliteStore(std::string path, std::unique_ptr<PingChains> chains,
              std::unique_ptr<Checkpointer> checkpointer, std::unique_ptr<Writer> writer,
              std::unique_ptr<SQLite::Database> reader);

  // Runs `query(db)` on a borrowed read connection; turns any exception into store_error::kRead.
  template <typename T, typename Query>
  Result<T> read(const char* what, Query&& query);
  std::unique_ptr<SQLite::Database> borrow_reader();  // throws SQLite::Exception
  void return_reader(std::unique_ptr<SQLite::Database> db);

  const std::string path_;
  std::unique_ptr<PingChains> chains_;  // written by the writer, read by pings() and heartbeat_marks()
  std::unique_ptr<Checkpointer> checkpointer_;  // hooked to the writer's connection: outlives it
  std::unique_ptr<Writer> writer_;              // the writer thread's once it runs, but vanished()

  // Guards only the idle list; connections are used outside the lock by one thread each.
  std::mutex readers_mu_;
  std::vector<std::unique_ptr<SQLite::Database>> idle_readers_;

  std::unique_ptr<WriteQueue> queue_;  // last: its thread stops first and uses writer_ until then
};

}  // namespace trainwatch::sqlite
