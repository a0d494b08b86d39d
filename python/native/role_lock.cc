#include "python/native/role_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "reporter/slot_dir.h"

namespace trainwatch::python {

Result<RoleLock> RoleLock::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    return make_error("io", "cannot open the agent's lock file " + path + ": " + std::strerror(errno));
  return RoleLock(fd);
}

RoleLock& RoleLock::operator=(RoleLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

RoleLock::~RoleLock() {
  if (fd_ >= 0) ::close(fd_);  // the last descriptor of the description: the lock goes with it
}

bool RoleLock::try_take() { return fd_ >= 0 && ::flock(fd_, LOCK_EX | LOCK_NB) == 0; }

void RoleLock::forget_in_child() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string role_lock_path(const std::string& dir, const std::string& job) {
  return reporter::user_slot_dir(dir, ::geteuid()) + "/" + job + ".agent.lock";
}

}  // namespace trainwatch::python
