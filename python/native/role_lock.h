// The agent role of a node, for agents hosted inside ranks (trainwatch.init(server=...) or
// health_port=): one lock file per user and job beside the slot file,
// <dir>/<uid>/<job>.agent.lock, held with flock(2) by the rank whose process runs the agent.
// The kernel drops the lock when that process ends however it ends, so the next rank to
// try takes the role, and the node stays watched until its last rank is gone.
//
// flock locks belong to the open file description, which a forked child shares: a child
// closes its copy (forget_in_child) and never unlocks, which would free the parent's lock.
#pragma once

#include <string>

#include "core/result.h"

namespace trainwatch::python {

class RoleLock {
 public:
  // Opens (creating, 0600) the lock file. Error "io" with the path and the reason.
  static Result<RoleLock> open(const std::string& path);
  RoleLock(RoleLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  RoleLock& operator=(RoleLock&& other) noexcept;
  RoleLock(const RoleLock&) = delete;
  RoleLock& operator=(const RoleLock&) = delete;
  ~RoleLock();

  // Takes the role when nobody holds it; never waits. True when this process holds it.
  bool try_take();
  // Closes this process's descriptor without unlocking (async-signal-safe: for an atfork
  // child handler). The parent keeps the role.
  void forget_in_child();

 private:
  explicit RoleLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// <dir>/<euid>/<job>.agent.lock
std::string role_lock_path(const std::string& dir, const std::string& job);

}  // namespace trainwatch::python
