#include "agent/child_stacks.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>

#include "core/python_stack.h"

namespace trainwatch::agent {
namespace {

// A children file is a few pids: one read of this much holds kMaxChildrenScanned of them.
constexpr size_t kMaxChildrenFileBytes = 4096;

std::string read_small(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string text(kMaxChildrenFileBytes, '\0');
  const ssize_t n = ::read(fd, text.data(), text.size());
  ::close(fd);
  text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return text;
}

// "101 102 " -> 101, 102, appended while out has room.
void add_pids(std::string_view text, size_t limit, std::vector<int32_t>& out) {
  while (!text.empty() && out.size() < limit) {
    int32_t pid = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), pid);
    if (ec != std::errc()) {
      text.remove_prefix(1);
      continue;
    }
    if (pid > 0) out.push_back(pid);
    text.remove_prefix(static_cast<size_t>(end - text.data()));
  }
}

}  // namespace

std::vector<int32_t> child_pids(int32_t pid, const std::string& proc_root, size_t limit) {
  std::vector<int32_t> out;
  const std::string tasks = proc_root + "/" + std::to_string(pid) + "/task";
  DIR* dir = ::opendir(tasks.c_str());
  if (dir == nullptr) return out;
  while (const dirent* entry = ::readdir(dir)) {
    if (out.size() >= limit) break;
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    add_pids(read_small(tasks + "/" + entry->d_name + "/children"), limit, out);
  }
  ::closedir(dir);
  return out;
}

std::vector<StackTarget> child_stack_targets(const StackTarget& rank, const std::string& top,
                                             std::string_view job, const std::string& proc_root) {
  std::vector<StackTarget> out;
  for (int32_t child : child_pids(rank.pid, proc_root, kMaxChildrenScanned)) {
    if (out.size() >= kMaxChildStacks) break;
    StackTarget target{child, rank.uid, stack_file_path(top, rank.uid, job, child)};
    struct stat st {};
    // capture_stacks checks the file again once open; this only skips children without one.
    if (::lstat(target.path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == rank.uid)
      out.push_back(std::move(target));
  }
  return out;
}

}  // namespace trainwatch::agent
