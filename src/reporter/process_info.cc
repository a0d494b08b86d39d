#include "reporter/process_info.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string_view>

namespace trainwatch::reporter {

std::optional<ProcessInfo> parse_stat(int32_t pid, const std::string& text) {
  // The command name (field 2) is in parentheses and may itself hold spaces and ')', so
  // fields are counted from the last ')'.
  size_t close = text.rfind(')');
  if (close == std::string::npos || close + 2 >= text.size()) return std::nullopt;
  ProcessInfo info;
  info.pid = pid;
  info.state = text[close + 2];
  // After ") " come field 3 (state) ... field 22 (starttime): skip 19 separators, reading
  // utime (14) and stime (15) on the way.
  size_t pos = close + 2;
  char* end = nullptr;
  for (int field = 3; field < 22; ++field) {
    pos = text.find(' ', pos);
    if (pos == std::string::npos) return std::nullopt;
    ++pos;
    if (field + 1 == 14 || field + 1 == 15) info.cpu_ticks += std::strtoull(text.c_str() + pos, &end, 10);
  }
  info.start_ticks = std::strtoull(text.c_str() + pos, &end, 10);
  if (end == text.c_str() + pos) return std::nullopt;
  // Optional from here: rss (24) and exit_code (52), which older kernels lack.
  for (int field = 22; field < 52; ++field) {
    pos = text.find(' ', pos);
    if (pos == std::string::npos) return info;
    ++pos;
    if (field + 1 == 24) info.rss_pages = std::strtoull(text.c_str() + pos, &end, 10);
  }
  const uint64_t status = std::strtoull(text.c_str() + pos, &end, 10);
  if (end != text.c_str() + pos) info.exit_status = static_cast<uint32_t>(status);
  return info;
}

std::optional<ProcessInfo> read_process(int32_t pid, const std::string& proc_root) {
  if (pid <= 0) return std::nullopt;
  std::string path = proc_root + "/" + std::to_string(pid) + "/stat";
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buf[1024];
  ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  return parse_stat(pid, std::string(buf, static_cast<size_t>(n)));
}

uint64_t self_start_ticks() {
  // Not cached: a forked child has the same code but another start time.
  auto info = read_process(static_cast<int32_t>(::getpid()));
  return info ? info->start_ticks : 0;
}

bool is_dead(const std::optional<ProcessInfo>& info, uint64_t expected_start_ticks) {
  if (!info) return true;
  if (info->state == 'Z' || info->state == 'X' || info->state == 'x') return true;
  return info->start_ticks != expected_start_ticks;
}

}  // namespace trainwatch::reporter
