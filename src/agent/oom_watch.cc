#include "agent/oom_watch.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <sstream>
#include <utility>

namespace trainwatch::agent {
namespace {

std::optional<uint64_t> number_after(std::string_view text, std::string_view key) {
  size_t at = text.find(key);
  while (at != std::string_view::npos) {
    // The key at a line's start, followed by a space: "oom_kill 3", never "oom_kill_disable 0".
    const bool line_start = at == 0 || text[at - 1] == '\n';
    const size_t value = at + key.size();
    if (line_start && value < text.size() && text[value] == ' ') {
      uint64_t n = 0;
      auto [end, ec] = std::from_chars(text.data() + value + 1, text.data() + text.size(), n);
      if (ec == std::errc{}) return n;
    }
    at = text.find(key, at + 1);
  }
  return std::nullopt;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace

std::optional<int32_t> oom_killed_pid(std::string_view record) {
  const size_t message = record.find(';');
  if (message == std::string_view::npos) return std::nullopt;
  record.remove_prefix(message + 1);
  // Global and memory-cgroup OOM kills alike: "Out of memory: Killed process 4242 (...)",
  // "Memory cgroup out of memory: Killed process 4242 (...)".
  constexpr std::string_view kKilled = "Killed process ";
  const size_t at = record.find(kKilled);
  if (at == std::string_view::npos || record.find("ut of memory") == std::string_view::npos)
    return std::nullopt;
  int32_t pid = 0;
  const char* first = record.data() + at + kKilled.size();
  auto [end, ec] = std::from_chars(first, record.data() + record.size(), pid);
  if (ec != std::errc{} || pid <= 0) return std::nullopt;
  return pid;
}

std::optional<uint64_t> parse_oom_kill_count(std::string_view text) { return number_after(text, "oom_kill"); }

std::string oom_count_file(std::string_view proc_cgroup, const std::string& cgroup_root) {
  std::string v1, v2;
  size_t start = 0;
  while (start < proc_cgroup.size()) {
    size_t end = proc_cgroup.find('\n', start);
    if (end == std::string_view::npos) end = proc_cgroup.size();
    const std::string_view line = proc_cgroup.substr(start, end - start);
    start = end + 1;
    // "hierarchy-id:controllers:path"
    const size_t a = line.find(':');
    const size_t b = a == std::string_view::npos ? a : line.find(':', a + 1);
    if (b == std::string_view::npos) continue;
    const std::string_view controllers = line.substr(a + 1, b - a - 1);
    const std::string path(line.substr(b + 1));
    if (controllers.empty() && line.substr(0, a) == "0") v2 = cgroup_root + path + "/memory.events";
    for (size_t c = 0; c <= controllers.size();) {
      size_t comma = controllers.find(',', c);
      if (comma == std::string_view::npos) comma = controllers.size();
      if (controllers.substr(c, comma - c) == "memory")
        v1 = cgroup_root + "/memory" + path + "/memory.oom_control";
      c = comma + 1;
    }
  }
  return !v1.empty() ? v1 : v2;
}

OomWatch::OomWatch(std::string proc_root, std::string cgroup_root)
    : proc_root_(std::move(proc_root)), cgroup_root_(std::move(cgroup_root)) {
  // Only what the kernel logs from now on: a kill before the agent started is not a rank's.
  kmsg_fd_ = ::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (kmsg_fd_ >= 0) ::lseek(kmsg_fd_, 0, SEEK_END);
}

OomWatch::~OomWatch() {
  if (kmsg_fd_ >= 0) ::close(kmsg_fd_);
}

void OomWatch::drain() {
  if (kmsg_fd_ < 0) return;
  std::array<char, 8192> record{};  // a read returns one record, at most 8 KiB (printk's bound)
  // Bounded: a kernel that logs faster than this is read keeps the rest for the next sample.
  for (int i = 0; i < 1024; ++i) {
    const ssize_t n = ::read(kmsg_fd_, record.data(), record.size());
    if (n < 0 && errno == EPIPE) continue;  // records were overwritten before we read them
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    if (auto pid = oom_killed_pid(std::string_view(record.data(), static_cast<size_t>(n)))) {
      killed_.push_back(*pid);
      while (killed_.size() > kMaxKept) killed_.pop_front();
    }
  }
}

bool OomWatch::logged_kill(int32_t pid) const {
  return std::find(killed_.begin(), killed_.end(), pid) != killed_.end();
}

std::optional<uint64_t> OomWatch::cgroup_kills(int32_t pid) {
  auto it = count_file_.find(pid);
  if (it == count_file_.end()) {
    if (count_file_.size() >= kMaxFiles) count_file_.clear();
    const std::string cgroup = read_text(proc_root_ + "/" + std::to_string(pid) + "/cgroup");
    it = count_file_.emplace(pid, oom_count_file(cgroup, cgroup_root_)).first;
  }
  if (it->second.empty()) return std::nullopt;
  return parse_oom_kill_count(read_text(it->second));
}

void OomWatch::forget(int32_t pid) { count_file_.erase(pid); }

}  // namespace trainwatch::agent
