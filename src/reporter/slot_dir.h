// Where slot files live, and who may have made them.
//
// Layout (TOP is TRAINWATCH_DIR, default /dev/shm/trainwatch):
//   TOP/                 1777 (sticky, like /tmp): every user may make their own entry in it,
//                        nobody may remove or rename another user's entry
//   TOP/<uid>/           0700, owned by <uid> (0750 and group TRAINWATCH_GROUP when set)
//   TOP/<uid>/<job>.slots  0600, owned by <uid> (0640 with TRAINWATCH_GROUP)
// A rank writes only under its own uid. The agent reads TOP/*/<job>.slots: as root it sees
// every user's ranks, as a user its own (and, with a group, those of users who share it).
//
// Modes are set with chmod after mkdir/open, so a umask cannot strip them. Everything found
// on disk is checked before it is trusted (lstat, then the opened descriptor's fstat, which
// must be the same inode): a symlink, an entry owned by someone else, or one that others
// may write is refused with a sentence that says which and what to do.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace trainwatch::reporter {

inline constexpr mode_t kTopDirMode = 01777;
inline constexpr mode_t kUserDirMode = 0700;
inline constexpr mode_t kUserDirGroupMode = 0750;
inline constexpr mode_t kSlotFileMode = 0600;
inline constexpr mode_t kSlotFileGroupMode = 0640;  // the group reads (an agent); it never writes

// TOP/<uid>
std::string user_slot_dir(const std::string& top, uid_t uid);

// An open directory descriptor; closes on destruction.
class DirFd {
 public:
  explicit DirFd(int fd = -1) : fd_(fd) {}
  DirFd(DirFd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  DirFd& operator=(DirFd&& other) noexcept;
  DirFd(const DirFd&) = delete;
  DirFd& operator=(const DirFd&) = delete;
  ~DirFd();
  int get() const { return fd_; }

 private:
  int fd_;
};

// Creates (mkdir -p) or checks TOP, then creates or checks TOP/<euid>, and returns the
// latter open. With a group, the user directory gets that group and kUserDirGroupMode.
// Error code "io" (cannot create or open) or "unsafe" (symlink, foreign owner, writable by
// others); the message names the path.
Result<DirFd> open_own_slot_dir(const std::string& top, std::optional<gid_t> group);

// Checks an opened directory or file against what the layout allows: not a symlink (lstat of
// path), the same inode as fd, owned by owner, no write bit for group or others.
Status check_entry(int fd, const std::string& path, uid_t owner, bool directory);

// TRAINWATCH_GROUP: a group name or a numeric gid. nullopt for an empty text.
Result<std::optional<gid_t>> resolve_group(const std::string& text);

// Readers: TOP/<uid>/<job>.slots for every user directory under TOP that passes the checks
// and this process may read. A directory that fails a check is reported in refused (one
// sentence each), never read. Up to kMaxUserDirs directories are looked at; past that the
// rest are left out and refused says so.
inline constexpr size_t kMaxUserDirs = 256;
struct UserSlotFile {
  uid_t uid;
  std::string path;
};
std::vector<UserSlotFile> list_slot_files(const std::string& top, const std::string& job,
                                          std::vector<std::string>* refused);

}  // namespace trainwatch::reporter
