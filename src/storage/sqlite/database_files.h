// DatabaseFiles: which files the store opened (the database and its WAL, by device and
// inode), and whether their paths still name them.
//
// Why: SQLite keeps writing to a file it has open even after a cleanup script (or an
// operator) unlinked it. Commits then go on succeeding into a WAL that no later start
// will find: every write not yet checkpointed is lost at the next crash or restart, while
// the store reports itself healthy. A path that no longer names the opened file (deleted,
// or deleted and created anew) is the sign; stat(2) of two paths is the whole cost.
#pragma once

#include <sys/types.h>

#include <string>

#include "core/result.h"

namespace trainwatch::sqlite {

class DatabaseFiles {
 public:
  // The files `path` and `path`-wal name now; call once the store has opened both.
  static Result<DatabaseFiles> capture(const std::string& path);

  // "" while both paths still name the files captured; otherwise which one does not, in
  // words for a log line and /healthz.
  std::string vanished() const;
  // Whether the database file's path still names the file opened (only the WAL may be gone).
  bool database_in_place() const { return changed(path_, database_).empty(); }

  const std::string& path() const { return path_; }

 private:
  struct Identity {
    dev_t device = 0;
    ino_t inode = 0;
  };
  DatabaseFiles(std::string path, Identity database, Identity wal);
  static std::string changed(const std::string& file, const Identity& opened);

  std::string path_;
  Identity database_;
  Identity wal_;
};

}  // namespace trainwatch::sqlite
