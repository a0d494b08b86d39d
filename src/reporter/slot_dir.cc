#include "reporter/slot_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "reporter/options.h"

namespace trainwatch::reporter {
namespace {

std::string errno_text() { return std::strerror(errno); }

std::string octal(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// mkdir -p of the parents of path (not path itself), with the umask's usual modes.
bool make_parents(const std::string& path) {
  size_t pos = 0;
  while ((pos = path.find('/', pos + 1)) != std::string::npos) {
    std::string partial = path.substr(0, pos);
    if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  return true;
}

Status unsafe(const std::string& path, const std::string& what) {
  return make_error("unsafe", path + " " + what +
                                  "; trainwatch does not use it (remove it, or set TRAINWATCH_DIR " +
                                  "to a directory of your own)");
}

// Opens an existing directory without following a final symlink; the error says why not.
Result<DirFd> open_dir_nofollow(int at, const std::string& name, const std::string& path) {
  int fd = ::openat(at, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) return DirFd(fd);
  int err = errno;
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) return unsafe(path, "is a symlink").error();
  return make_error("io", "cannot open directory " + path + ": " + std::strerror(err));
}

// TOP: created 1777 when missing; an existing one must be a real directory that others
// cannot write unless it is sticky (else they could swap our entry between check and use).
Result<DirFd> open_top(const std::string& top) {
  if (!make_parents(top)) return make_error("io", "cannot create directory " + top + ": " + errno_text());
  bool created = ::mkdir(top.c_str(), 0700) == 0;
  if (!created && errno != EEXIST)
    return make_error("io", "cannot create directory " + top + ": " + errno_text());
  auto dir = open_dir_nofollow(AT_FDCWD, top, top);
  if (!dir) return dir;
  if (created && ::fchmod(dir->get(), kTopDirMode) != 0) {
    return make_error("io", "cannot set mode " + octal(kTopDirMode) + " on " + top + ": " + errno_text());
  }
  struct stat st {};
  if (::fstat(dir->get(), &st) != 0) return make_error("io", "cannot stat " + top + ": " + errno_text());
  // Earlier versions meant 1777 but let the umask turn it into 1755, which kept every other
  // user out. A sticky TOP of our own is a shared one: give it the mode it was meant to have.
  if (!created && st.st_uid == ::geteuid() && (st.st_mode & S_ISVTX) != 0 &&
      (st.st_mode & 07777) != kTopDirMode && ::fchmod(dir->get(), kTopDirMode) == 0) {
    st.st_mode = (st.st_mode & ~mode_t{07777}) | kTopDirMode;
  }
  if ((st.st_mode & 0022) != 0 && (st.st_mode & S_ISVTX) == 0) {
    return unsafe(top, "is writable by other users without the sticky bit (mode " + octal(st.st_mode) + ")")
        .error();
  }
  return dir;
}

}  // namespace

DirFd& DirFd::operator=(DirFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

DirFd::~DirFd() {
  if (fd_ >= 0) ::close(fd_);
}

std::string user_slot_dir(const std::string& top, uid_t uid) { return top + "/" + std::to_string(uid); }

Status check_entry(int fd, const std::string& path, uid_t owner, bool directory) {
  struct stat link {};
  if (::lstat(path.c_str(), &link) != 0) return make_error("io", "cannot stat " + path + ": " + errno_text());
  if (S_ISLNK(link.st_mode)) return unsafe(path, "is a symlink");
  struct stat st {};
  if (::fstat(fd, &st) != 0) return make_error("io", "cannot stat " + path + ": " + errno_text());
  if (st.st_dev != link.st_dev || st.st_ino != link.st_ino)
    return unsafe(path, "was replaced while it was opened");
  if (directory ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) {
    return unsafe(path, directory ? "is not a directory" : "is not a regular file");
  }
  if (st.st_uid != owner) {
    return unsafe(path,
                  "is owned by uid " + std::to_string(st.st_uid) + ", not uid " + std::to_string(owner));
  }
  if ((st.st_mode & 0022) != 0) {
    return unsafe(path, "is writable by group or others (mode " + octal(st.st_mode) + ")");
  }
  return Ok{};
}

Result<DirFd> open_own_slot_dir(const std::string& top, std::optional<gid_t> group) {
  auto top_dir = open_top(top);
  if (!top_dir) return top_dir;
  uid_t me = ::geteuid();
  std::string name = std::to_string(me);
  std::string path = user_slot_dir(top, me);
  // mkdir's mode is only an upper bound (the umask removes bits); fchmod below sets it.
  bool created = ::mkdirat(top_dir->get(), name.c_str(), 0700) == 0;
  if (!created && errno != EEXIST)
    return make_error("io", "cannot create directory " + path + ": " + errno_text());
  auto dir = open_dir_nofollow(top_dir->get(), name, path);
  if (!dir) return dir;
  if (auto ok = check_entry(dir->get(), path, me, true); !ok) return ok.error();
  if (group && ::fchown(dir->get(), static_cast<uid_t>(-1), *group) != 0) {
    return make_error("io", "cannot give " + path + " to group " + std::to_string(*group) +
                                " (TRAINWATCH_GROUP): " + errno_text());
  }
  mode_t mode = group ? kUserDirGroupMode : kUserDirMode;
  if (::fchmod(dir->get(), mode) != 0) {
    return make_error("io", "cannot set mode " + octal(mode) + " on " + path + ": " + errno_text());
  }
  return dir;
}

Result<std::optional<gid_t>> resolve_group(const std::string& text) {
  if (text.empty()) return std::optional<gid_t>{};
  if (auto gid = parse_int(text, 0, 0x7fffffff)) return std::optional<gid_t>{static_cast<gid_t>(*gid)};
  struct group grp {};
  struct group* found = nullptr;
  char buf[16384];
  if (::getgrnam_r(text.c_str(), &grp, buf, sizeof buf, &found) != 0 || found == nullptr) {
    return make_error("environment", "TRAINWATCH_GROUP='" + text + "' is not a group on this host");
  }
  return std::optional<gid_t>{found->gr_gid};
}

std::vector<UserSlotFile> list_slot_files(const std::string& top, const std::string& job,
                                          std::vector<std::string>* refused) {
  std::vector<UserSlotFile> out;
  auto top_dir = open_dir_nofollow(AT_FDCWD, top, top);
  if (!top_dir) {
    if (top_dir.error().code == "unsafe" && refused) refused->push_back(top_dir.error().message);
    return out;
  }
  int scan_fd = ::dup(top_dir->get());
  DIR* scan = scan_fd >= 0 ? ::fdopendir(scan_fd) : nullptr;
  if (scan == nullptr) {
    if (scan_fd >= 0) ::close(scan_fd);
    return out;
  }
  std::string file_name = job + ".slots";
  size_t looked_at = 0;
  while (dirent* entry = ::readdir(scan)) {
    auto uid = parse_int(entry->d_name, 0, 0xfffffffe);
    if (!uid) continue;  // ".", "..", and anything that is not a user's directory
    if (++looked_at > kMaxUserDirs) {
      if (refused)
        refused->push_back(top + " has more than " + std::to_string(kMaxUserDirs) +
                           " user directories; the rest are not read");
      break;
    }
    std::string path = user_slot_dir(top, static_cast<uid_t>(*uid));
    int fd = ::openat(top_dir->get(), entry->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      // Another user's private directory (EACCES) is simply not ours to watch.
      if (errno == ELOOP || errno == ENOTDIR) {
        if (auto st = check_entry(top_dir->get(), path, static_cast<uid_t>(*uid), true); !st && refused) {
          refused->push_back(st.error().message);
        }
      }
      continue;
    }
    DirFd dir(fd);
    if (auto ok = check_entry(dir.get(), path, static_cast<uid_t>(*uid), true); !ok) {
      if (refused) refused->push_back(ok.error().message);
      continue;
    }
    struct stat st {};
    if (::fstatat(dir.get(), file_name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      continue;  // no rank of the job
    out.push_back({static_cast<uid_t>(*uid), path + "/" + file_name});
  }
  ::closedir(scan);
  return out;
}

}  // namespace trainwatch::reporter
