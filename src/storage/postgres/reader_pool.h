// ReaderPool: the read connections of a PostgresStore.
//
// Each read borrows a connection and runs in one read-only REPEATABLE READ transaction,
// so a read of several statements sees one snapshot; it never waits for the writer
// (MVCC: readers see the last committed state). At most kMaxConnections are open; a read
// that finds them all busy waits up to kBorrowWait for one, then fails store_error::kUnavailable.
// A connection whose read failed is closed, not pooled; the next read opens a new one,
// so a restarted server is used again without any reconnect logic here.
//
// Errors: every failure is a Result (store_error::kRead, store_error::kUnavailable, store_error::kCorrupt),
// never an exception, and never contains the password.
//
// Threading: read() may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "core/result.h"
#include "storage/postgres/connection.h"
#include "storage/store_errors.h"

namespace trainwatch::postgres {

using ReadTx = pqxx::transaction<pqxx::isolation_level::repeatable_read, pqxx::readwrite_policy::read_only>;

class ReaderPool {
 public:
  static constexpr size_t kMaxConnections = 4;
  static constexpr std::chrono::seconds kBorrowWait{5};
  // A read that waits DatabaseSessionLimits::lock_wait for a lock (a table locked by a
  // migration, an operator's LOCK TABLE, a long DDL), or runs for its `statement`, fails
  // store_error::kRead instead: the replica set and the engine read through this pool, and
  // neither may stall behind a lock for its duration (connection.h: SessionRole::kReader).
  ReaderPool(std::string url, DatabaseSessionLimits limits) : url_(std::move(url)), limits_(limits) {}

  // Runs `query(tx)` in a transaction that may write and is committed after it: a read
  // that takes what it reads (Store::claim_deliveries). Errors as read()'s.
  template <typename T, typename Query>
  Result<T> read_and_mark(const char* what, Query&& query) {
    auto conn = borrow();
    if (!conn)
      return make_error(conn.error().code, std::string("cannot read ") + what + ": " + conn.error().message);
    try {
      Result<T> out = [&] {
        pqxx::work tx(**conn);
        Result<T> result = query(static_cast<pqxx::transaction_base&>(tx));
        tx.commit();
        return result;
      }();
      give_back(std::move(*conn));
      return out;
    } catch (const std::exception& e) {
      give_back(nullptr);
      return make_error(store_error::kRead,
                        std::string("cannot read ") + what + ": " + scrub(e.what(), url_));
    }
  }

  // Runs `query(tx)`, a callable returning Result<T>; `what` names the data for errors.
  template <typename T, typename Query>
  Result<T> read(const char* what, Query&& query) {
    auto conn = borrow();
    if (!conn)
      return make_error(conn.error().code, std::string("cannot read ") + what + ": " + conn.error().message);
    try {
      Result<T> out = [&] {
        ReadTx tx(**conn);
        return query(static_cast<pqxx::transaction_base&>(tx));
      }();
      give_back(std::move(*conn));
      return out;
    } catch (const std::exception& e) {
      give_back(nullptr);
      return make_error(store_error::kRead,
                        std::string("cannot read ") + what + ": " + scrub(e.what(), url_));
    }
  }

 private:
  // An idle connection, or a new one while fewer than kMaxConnections are open.
  Result<std::unique_ptr<pqxx::connection>> borrow();
  // Null: the borrowed connection was broken and is gone.
  void give_back(std::unique_ptr<pqxx::connection> conn);

  const std::string url_;
  const DatabaseSessionLimits limits_;
  std::mutex mu_;
  std::condition_variable freed_;
  std::vector<std::unique_ptr<pqxx::connection>> idle_;
  size_t open_ = 0;  // idle and borrowed
};

}  // namespace trainwatch::postgres
