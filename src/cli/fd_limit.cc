#include "cli/fd_limit.h"

#include <sys/resource.h>

#include <cerrno>
#include <cstring>

namespace trainwatch::cli {

namespace {
// A hard limit of "unlimited" cannot be the soft one (the kernel caps it at fs.nr_open,
// 1,048,576 by default): aim for that instead.
constexpr uint64_t kUnlimitedTarget = 1'048'576;
}  // namespace

FdLimit raise_fd_limit() {
  FdLimit out;
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    out.error = std::strerror(errno);
    return out;
  }
  out.before = out.soft = limit.rlim_cur;
  out.hard = limit.rlim_max;
  const uint64_t target = limit.rlim_max == RLIM_INFINITY ? kUnlimitedTarget : limit.rlim_max;
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur >= target) return out;
  limit.rlim_cur = target;
  if (setrlimit(RLIMIT_NOFILE, &limit) != 0) {
    out.error = std::strerror(errno);
    return out;
  }
  out.soft = target;
  return out;
}

std::string describe(const FdLimit& limit) {
  const std::string hard = limit.hard == RLIM_INFINITY ? "unlimited" : std::to_string(limit.hard);
  if (!limit.error.empty()) {
    return "descriptor limit stays at " + std::to_string(limit.soft) + " (hard " + hard +
           "): cannot raise it: " + limit.error;
  }
  if (limit.soft != limit.before) {
    return "descriptor limit raised from " + std::to_string(limit.before) + " to " +
           std::to_string(limit.soft);
  }
  return "descriptor limit " + std::to_string(limit.soft) +
         " (the hard limit; raise it with LimitNOFILE= or ulimit -Hn)";
}

}  // namespace trainwatch::cli
