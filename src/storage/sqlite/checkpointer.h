// Checkpointer: copies the WAL back into the database file on its own thread and
// connection, so the writer never does it inside a commit.
//
// Why: SQLite's automatic checkpoint runs in the commit that crosses the WAL threshold;
// that commit then also writes the checkpointed pages into the database file and fsyncs
// it, and every ping waiting on it waited for that (the ping benchmark's p99 went from
// 9 ms to over 30 ms with append-only pings, which cross the threshold every second).
// A PASSIVE checkpoint on another connection runs beside the writer's commits instead.
//
// The writer connection's automatic checkpoints are turned off; its WAL hook calls
// `wal_grew` after each commit, which wakes this thread once the WAL holds
// kCheckpointPages. The destructor stops the thread (a checkpoint in progress finishes).
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace SQLite {
class Database;
}

namespace trainwatch::sqlite {

class Checkpointer {
 public:
  // SQLite's own default threshold: about 4 MB of WAL with 4 KB pages.
  static constexpr int kCheckpointPages = 1000;

  // Opens its connection to `path` and hooks `writer` (throws SQLite::Exception).
  Checkpointer(const std::string& path, SQLite::Database& writer);
  ~Checkpointer();
  Checkpointer(const Checkpointer&) = delete;
  Checkpointer& operator=(const Checkpointer&) = delete;

  // From the writer's WAL hook: the WAL now holds `pages` frames.
  void wal_grew(int pages);

 private:
  void run();

  std::unique_ptr<SQLite::Database> db_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool due_ = false;
  bool stopping_ = false;
  std::thread thread_;  // last: starts once the rest is built
};

}  // namespace trainwatch::sqlite
