// Writer: applies the write queue's batches to SQLite on the store's only write connection.
//
// One transaction per batch (synchronous=FULL), each operation under its own savepoint (a
// run of pings shares one, and is applied ping by ping when one of them fails):
// an operation that fails (an incident id used twice) gets its own error and the rest of
// the batch commits; a failed BEGIN or COMMIT fails every operation of the batch. Done
// callbacks run after the commit (WriteQueue), so `done` means stored. Each failure is
// classified by SQLite's error (sqlite_store.h says how it is counted and answered).
//
// Vanished files: before and after each transaction, and when the queue is idle, the
// writer checks that the database and its WAL are still in place (database_files.h); the
// first time they are not, it copies what it committed into the database file and from
// then on refuses every write (vanished()).
//
// Threading: the writer thread only, after construction, except vanished() (any thread).
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <SQLiteCpp/Statement.h>

#include "storage/sqlite/database_files.h"
#include "storage/sqlite/write_ops.h"
#include "storage/write_queue.h"

namespace SQLite {
class Database;
}

namespace trainwatch::sqlite {

class PingChains;

class Writer final : public BatchApplier {
 public:
  // `db` is open, in WAL mode and migrated; `files` were captured after the migrations.
  // Prepares every write statement: throws SQLite::Exception.
  Writer(std::unique_ptr<SQLite::Database> db, PingChains& chains, DatabaseFiles files);
  ~Writer() override;

  // Applies `batch` in one transaction; returns one outcome per operation, in order.
  std::vector<WriteOutcome> apply(const std::vector<QueuedWrite>& batch) override;

  // Between batches, so that an idle store notices a vanished file too (WriteQueue's idle_tick).
  void idle() override;

  // Saves the ping chains' heads when they changed and the last save is kHeadsSaveInterval
  // old (or always at shutdown, so the next start has nothing to replay). A failed save is
  // retried at the next one.
  void after_batch(bool force) override;

  // Why writes are refused for good (a file vanished); "" while they are not. Any thread.
  std::string vanished() const;

 private:
  // Saving heads costs one upsert per pinged monitor; every 10 s keeps that rare and the
  // replay at the next start short (at most 10 s of pings).
  static constexpr std::chrono::seconds kHeadsSaveInterval{10};

  WriteOutcome apply_one(const WriteOp& op);
  // batch[first, first + count) are all RecordPing; appends their outcomes to `out`.
  void apply_pings(const std::vector<QueuedWrite>& batch, size_t first, size_t count,
                   std::vector<WriteOutcome>& out);
  bool files_gone();
  std::string rescue_committed_writes();
  std::vector<WriteOutcome> refused(size_t n) const;
  bool undo_savepoint();

  std::unique_ptr<SQLite::Database> db_;  // first: destroyed after the statements prepared on it
  PingChains& chains_;
  const DatabaseFiles files_;
  bool gone_ = false;               // the writer thread's: a file vanished, writes are refused
  mutable std::mutex vanished_mu_;  // guards vanished_, read by write_health() on any thread
  std::string vanished_;
  std::chrono::steady_clock::time_point last_heads_save_ = std::chrono::steady_clock::now();
  // Each operation's savepoint, prepared once: compiling these two statements per
  // operation cost more than a ping's INSERT itself.
  SQLite::Statement savepoint_;
  SQLite::Statement release_;
  PreparedWrites writes_;
};

}  // namespace trainwatch::sqlite
