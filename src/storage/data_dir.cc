#include "storage/data_dir.h"
#include "storage/store_errors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace trainwatch {
namespace {

constexpr mode_t kDirMode = 0700;
constexpr mode_t kFileMode = 0600;

std::string errno_text() { return std::strerror(errno); }

}  // namespace

Status prepare_data_dir(const std::string& dir) {
  const std::filesystem::path path(dir);
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  if (ec)
    return make_error(store_error::kDataDir,
                      "cannot create " + path.parent_path().string() + ": " + ec.message());
  if (::mkdir(dir.c_str(), kDirMode) != 0) {
    if (errno == EEXIST) return Ok{};
    return make_error(store_error::kDataDir, "cannot create " + dir + ": " + errno_text());
  }
  // mkdir's mode passes through the umask; a umask of 0077 or 0022 leaves 0700 alone, but
  // one that strips the owner's bits would not, so the mode is set once more.
  if (::chmod(dir.c_str(), kDirMode) != 0) {
    return make_error(store_error::kDataDir, "cannot set the mode of " + dir + ": " + errno_text());
  }
  return Ok{};
}

Status restrict_database_files(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, kFileMode);
  if (fd < 0)
    return make_error(store_error::kOpen, "cannot open the database '" + path + "': " + errno_text());
  struct stat st {};
  const bool ok = ::fstat(fd, &st) == 0 && ((st.st_mode & 0777) == kFileMode || ::fchmod(fd, kFileMode) == 0);
  const std::string why = ok ? "" : errno_text();
  ::close(fd);
  if (!ok)
    return make_error(store_error::kOpen, "cannot make the database '" + path + "' private (0600): " + why);
  // Left over from a run that did not close cleanly, perhaps by a version that made them
  // readable by others.
  for (const char* suffix : {"-wal", "-shm"}) {
    const std::string extra = path + suffix;
    if (::lstat(extra.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0077) != 0) {
      if (::chmod(extra.c_str(), kFileMode) != 0) {
        return make_error(store_error::kOpen, "cannot make '" + extra + "' private (0600): " + errno_text());
      }
    }
  }
  return Ok{};
}

}  // namespace trainwatch
