#include "agent/wait_point.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <charconv>

namespace trainwatch::agent {
namespace {

std::string read_proc_text(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::array<char, 256> buf{};
  ssize_t n = ::read(fd, buf.data(), buf.size());
  ::close(fd);
  return n > 0 ? std::string(buf.data(), static_cast<size_t>(n)) : std::string();
}

}  // namespace

std::string syscall_name(long number) {
  // The kernel's names for this architecture (cmake/SyscallTable.cmake), in its order.
  struct Row {
    long number;
    const char* name;
  };
  static constexpr Row kTable[] = {
#include "syscall_table.inc"
      {-1, ""},  // keeps the array non-empty where the table could not be read
  };
  for (const auto& [n, name] : kTable) {
    if (n == number) return name;
  }
  return "syscall " + std::to_string(number);
}

std::string syscall_from_proc(std::string_view text) {
  if (text.rfind("running", 0) == 0) return "running";
  long number = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc() || end == text.data()) return {};
  if (number < 0) return {};  // blocked, but not in a system call
  return syscall_name(number);
}

WaitPoint read_wait_point(int32_t pid, const std::string& proc_root) {
  const std::string dir = proc_root + "/" + std::to_string(pid) + "/";
  WaitPoint w;
  w.syscall = syscall_from_proc(read_proc_text(dir + "syscall"));
  w.wchan = read_proc_text(dir + "wchan");
  // "0" is the kernel's "not sleeping" (and what it shows to those who may not see it).
  if (w.wchan == "0") w.wchan.clear();
  while (!w.wchan.empty() && (w.wchan.back() == '\n' || w.wchan.back() == ' ')) w.wchan.pop_back();
  return w;
}

}  // namespace trainwatch::agent
