#include "storage/postgres/reader_pool.h"
#include "storage/store_errors.h"

namespace trainwatch::postgres {

Result<std::unique_ptr<pqxx::connection>> ReaderPool::borrow() {
  {
    std::unique_lock lock(mu_);
    if (!freed_.wait_for(lock, kBorrowWait, [&] { return !idle_.empty() || open_ < kMaxConnections; })) {
      return make_error(store_error::kUnavailable,
                        std::to_string(kMaxConnections) + " reads are running already");
    }
    if (!idle_.empty()) {
      auto conn = std::move(idle_.back());
      idle_.pop_back();
      return conn;
    }
    ++open_;  // reserved before connecting, so concurrent borrowers respect the bound
  }
  auto conn = connect(url_, SessionRole::kReader, limits_);  // outside the lock: a round trip or more
  if (!conn) give_back(nullptr);
  return conn;
}

void ReaderPool::give_back(std::unique_ptr<pqxx::connection> conn) {
  {
    std::lock_guard lock(mu_);
    if (conn && conn->is_open()) {
      idle_.push_back(std::move(conn));
    } else {
      --open_;
    }
  }
  freed_.notify_one();
}

}  // namespace trainwatch::postgres
