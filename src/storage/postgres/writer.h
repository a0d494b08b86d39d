// Writer: applies the write queue's batches to PostgreSQL on its own connection.
//
// One transaction per batch, each operation under a savepoint: an operation that fails
// (an incident id used twice) gets its own error and the rest of the batch commits; a
// failed BEGIN or COMMIT, or a lost connection, fails every operation of the batch. Done
// callbacks run after COMMIT returned (WriteQueue), so `done` means stored.
//
// Connection loss: the connection is dropped and a new one tried before a later batch,
// at most once per backoff delay (kMinReconnectDelay doubling to kMaxReconnectDelay).
// Batches that come while the database is unreachable fail at once with
// store_error::kUnavailable (reason "unavailable"), so nothing waits on a dead server and
// nothing is acknowledged that is not stored; the first batch after a reconnect commits
// again. A connect attempt blocks the writer at most kConnectTimeoutSeconds.
//
// Day partitions: a batch with results first makes sure their days' partitions exist
// (day_partitions.h). Should that fail, the results go to the default partition: a
// missing partition never fails a write.
//
// Threading: the writer thread only, after construction.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "core/database_session.h"
#include "core/log_throttle.h"
#include "storage/postgres/day_partitions.h"
#include "storage/store_errors.h"
#include "storage/write_queue.h"

// pqxx::connection itself, not its base: connection_base has no virtual destructor.
#include <pqxx/connection>

namespace trainwatch::postgres {

class Writer final : public BatchApplier {
 public:
  static constexpr std::chrono::milliseconds kMinReconnectDelay{100};
  static constexpr std::chrono::milliseconds kMaxReconnectDelay{5'000};

  // `conn` is open and its schema current.
  Writer(std::string url, std::unique_ptr<pqxx::connection> conn, DatabaseSessionLimits limits);
  ~Writer() override;

  std::vector<WriteOutcome> apply(const std::vector<QueuedWrite>& batch) override;

 private:
  // True when a connection is ready; else `why` says what the last attempt met.
  bool ensure_connected();
  void lose_connection(const std::string& why);
  // The days of the batch's results whose partitions it made sure of; none on failure.
  std::vector<int64_t> ensure_partitions(pqxx::work& tx, const std::vector<QueuedWrite>& batch);
  static void lock_fenced_tables(pqxx::work& tx, const std::vector<QueuedWrite>& batch);

  const std::string url_;
  const DatabaseSessionLimits limits_;
  std::unique_ptr<pqxx::connection> conn_;  // null while the database is unreachable
  std::string unreachable_because_;
  std::chrono::steady_clock::time_point next_attempt_{};
  std::chrono::milliseconds delay_ = kMinReconnectDelay;
  DayPartitions partitions_;
  LogThrottle partition_failures_{std::chrono::minutes(1)};  // one line a minute at most
};

}  // namespace trainwatch::postgres
