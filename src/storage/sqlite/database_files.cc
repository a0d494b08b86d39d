#include "storage/sqlite/database_files.h"
#include "storage/store_errors.h"

#include <sys/stat.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace trainwatch::sqlite {

DatabaseFiles::DatabaseFiles(std::string path, Identity database, Identity wal)
    : path_(std::move(path)), database_(database), wal_(wal) {}

Result<DatabaseFiles> DatabaseFiles::capture(const std::string& path) {
  std::array<Identity, 2> ids{};
  const std::array<std::string, 2> files = {path, path + "-wal"};
  for (size_t i = 0; i < files.size(); ++i) {
    struct stat st {};
    if (::stat(files[i].c_str(), &st) != 0) {
      return make_error(store_error::kOpen, "cannot stat '" + files[i] + "': " + std::strerror(errno));
    }
    ids[i] = Identity{st.st_dev, st.st_ino};
  }
  return DatabaseFiles(path, ids[0], ids[1]);
}

std::string DatabaseFiles::changed(const std::string& file, const Identity& opened) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) {
    // Any other error (a permission changed, an I/O error) says nothing of the file: the
    // writes themselves fail then, and stop failing when it passes.
    return errno == ENOENT ? "the file '" + file + "' was deleted under the server" : std::string();
  }
  if (st.st_dev != opened.device || st.st_ino != opened.inode)
    return "the file '" + file + "' was replaced under the server (deleted, then created anew)";
  return {};
}

std::string DatabaseFiles::vanished() const {
  if (std::string why = changed(path_, database_); !why.empty()) return why;
  return changed(path_ + "-wal", wal_);
}

}  // namespace trainwatch::sqlite
