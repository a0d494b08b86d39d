// How ranks ended, though they are not the agent's children: the kernel's process events
// connector (netlink NETLINK_CONNECTOR, group CN_IDX_PROC) announces every process's exit
// with its wait status. Subscribing needs CAP_NET_ADMIN in the initial network namespace
// (an agent run as root on the host); elsewhere the agent goes on without exit statuses and
// says "exit status unknown".
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace trainwatch::agent {

// The exits of whole processes (thread-group leaders) in one datagram from the connector:
// (pid, wait status) pairs. Anything else, or a malformed message, is skipped.
std::vector<std::pair<int32_t, uint32_t>> parse_process_exits(const char* data, size_t size);

// The host's count of OOM kills ("oom_kill" in /proc/vmstat); nullopt when unreadable.
std::optional<uint64_t> read_oom_kill_count(const std::string& proc_root);

class ExitWatch {
 public:
  // At most this many exits are kept until taken; the oldest go first.
  static constexpr size_t kMaxKept = 1024;
  // The kernel's queue of events between two drains (it doubles what is asked): about
  // 20,000 events, a second of 10,000 processes started and ended. Memory is taken only
  // while events wait.
  static constexpr int kQueueBytes = 8 << 20;

  // Subscribes; null, with why_not set, when the kernel refuses.
  static std::unique_ptr<ExitWatch> open(std::string& why_not);
  ~ExitWatch();
  ExitWatch(const ExitWatch&) = delete;
  ExitWatch& operator=(const ExitWatch&) = delete;

  // Reads every queued event without waiting, keeping the exits of the pids `wanted` names.
  void drain(const std::function<bool(int32_t)>& wanted);
  // The wait status of pid's exit, once; nullopt when none was seen (yet).
  std::optional<uint32_t> take(int32_t pid);

 private:
  explicit ExitWatch(int fd) : fd_(fd) {}
  int fd_;
  std::unordered_map<int32_t, uint32_t> exits_;
  std::deque<int32_t> order_;  // arrival order of exits_, for the bound
};

}  // namespace trainwatch::agent
