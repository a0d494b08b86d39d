#include "storage/sqlite/checkpointer.h"

#include <SQLiteCpp/Database.h>
#include <sqlite3.h>

#include <exception>

namespace trainwatch::sqlite {
namespace {

int on_wal_commit(void* checkpointer, sqlite3*, const char*, int pages) {
  static_cast<Checkpointer*>(checkpointer)->wal_grew(pages);
  return SQLITE_OK;
}

}  // namespace

Checkpointer::Checkpointer(const std::string& path, SQLite::Database& writer)
    : db_(std::make_unique<SQLite::Database>(path, SQLite::OPEN_READWRITE)) {
  db_->setBusyTimeout(5000);
  writer.exec("PRAGMA wal_autocheckpoint = 0");
  sqlite3_wal_hook(writer.getHandle(), on_wal_commit, this);
  thread_ = std::thread([this] { run(); });
}

Checkpointer::~Checkpointer() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_one();
  thread_.join();
}

void Checkpointer::wal_grew(int pages) {
  if (pages < kCheckpointPages) return;
  {
    std::lock_guard lock(mu_);
    if (due_) return;
    due_ = true;
  }
  cv_.notify_one();
}

void Checkpointer::run() {
  for (;;) {
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return due_ || stopping_; });
      if (stopping_) return;
      due_ = false;
    }
    try {
      // PASSIVE: copies what no reader still needs and never waits for the writer. The
      // writer restarts the WAL from its beginning at its next commit once all of it is
      // copied, so the file stops growing.
      db_->exec("PRAGMA wal_checkpoint(PASSIVE)");
    } catch (const std::exception&) {
      // Nothing is lost: the frames stay in the WAL and the next request retries.
    }
  }
}

}  // namespace trainwatch::sqlite
