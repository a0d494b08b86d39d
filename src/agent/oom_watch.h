// Whether a rank that died by SIGKILL was the kernel's OOM killer's victim, from the best
// evidence this agent can read, in order:
//   1. the kernel log (/dev/kmsg, root or CAP_SYSLOG): "Out of memory: Killed process 4242"
//      and "Memory cgroup out of memory: Killed process 4242" name the pid itself;
//   2. the OOM-kill count of the rank's own memory cgroup (cgroup v2 memory.events, v1
//      memory.oom_control: "oom_kill N"), read while the rank lived;
//   3. the host's count (/proc/vmstat oom_kill), as before.
// A count is compared with its value two samples before the rank was last seen alive: the
// kernel counts the kill before it sends the signal, and a large process can take a sample's
// time to exit, so the last sample that saw it alive may already include its own kill.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace trainwatch::agent {

// The pid an OOM-kill line of the kernel log names, from one /dev/kmsg record
// ("6,1234,5678,-;Out of memory: Killed process 4242 (python3) total-vm:..."); nullopt for
// any other record.
std::optional<int32_t> oom_killed_pid(std::string_view record);

// "oom_kill N" from the text of memory.events (v2) or memory.oom_control (v1).
std::optional<uint64_t> parse_oom_kill_count(std::string_view text);

// The memory cgroup file that counts a process's OOM kills, from /proc/<pid>/cgroup's text:
// <cgroup_root>/memory/<path>/memory.oom_control for a v1 memory hierarchy, else
// <cgroup_root>/<path>/memory.events (v2); "" when neither names one.
std::string oom_count_file(std::string_view proc_cgroup, const std::string& cgroup_root);

class OomWatch {
 public:
  // Kill lines of at most this many pids are kept until asked about; the oldest go first.
  static constexpr size_t kMaxKept = 256;
  // Count files remembered; past it they are all forgotten and found again on demand.
  static constexpr size_t kMaxFiles = 4096;

  OomWatch(std::string proc_root, std::string cgroup_root);
  ~OomWatch();
  OomWatch(const OomWatch&) = delete;
  OomWatch& operator=(const OomWatch&) = delete;

  // Reads the kernel log's new records without waiting (when it could be opened).
  void drain();
  // Whether the kernel log named pid as an OOM kill since this watch opened.
  bool logged_kill(int32_t pid) const;
  // The OOM-kill count of pid's memory cgroup; nullopt when unreadable. The file is found
  // once per pid and kept (forget() drops it).
  std::optional<uint64_t> cgroup_kills(int32_t pid);
  void forget(int32_t pid);
  bool reads_kernel_log() const { return kmsg_fd_ >= 0; }

 private:
  std::string proc_root_, cgroup_root_;
  int kmsg_fd_ = -1;
  std::deque<int32_t> killed_;                 // pids the log named, oldest first
  std::map<int32_t, std::string> count_file_;  // pid -> its cgroup's count file ("" none)
};

}  // namespace trainwatch::agent
