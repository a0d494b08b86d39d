// The data directory and the database files hold tokens, ping bodies and alert payloads:
// only the user trainwatch runs as may read them, whatever the umask.
#pragma once

#include <string>

#include "core/result.h"
#include "storage/store_errors.h"

namespace trainwatch {

// Creates `dir` (and missing parents) if it does not exist; the directory itself comes
// out mode 0700 whatever the umask. An existing directory is used as it is: its owner
// may have shared it on purpose. Error: store_error::kDataDir.
Status prepare_data_dir(const std::string& dir);

// Creates the database file at `path` mode 0600 if it does not exist, and takes group and
// other access away from it and from its -wal and -shm files if they have any. SQLite
// creates -wal and -shm with the database file's mode, so they follow. Error: store_error::kOpen.
Status restrict_database_files(const std::string& path);

}  // namespace trainwatch
