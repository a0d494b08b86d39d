#include "agent/stack_capture.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <thread>

#include "reporter/slot_dir.h"

namespace trainwatch::agent {
namespace {

constexpr std::string_view kHeader = "trainwatch-stack 1 signal=";

std::string read_at_most(int fd, off_t offset, size_t limit) {
  std::string out(limit, '\0');
  ssize_t n = ::pread(fd, out.data(), limit, offset);
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return out;
}

std::string read_file(const std::string& path, size_t limit) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string text = read_at_most(fd, 0, limit);
  ::close(fd);
  return text;
}

// One target in flight: its open file and how big it was before the signal.
struct Pending {
  int fd = -1;
  off_t before = 0;
  off_t last_size = -1;
  bool done = false;
};

off_t size_of(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 ? st.st_size : -1;
}

// Opens the stack file, checks it, cuts it back when it grew too big, and signals the rank.
// Returns the open file or sets the note.
Pending request(const StackTarget& t, const std::string& proc_root, std::string& note) {
  Pending p;
  int fd = ::open(t.path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) fd = ::open(t.path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    note = "no stack file (the rank's trainwatch predates stacks, or TRAINWATCH_STACK_SIGNAL=off)";
    return p;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != t.uid) {
    ::close(fd);
    note = "stack file " + t.path + " is not a regular file of the rank's user; ignored";
    return p;
  }
  const std::string head = read_at_most(fd, 0, 64);
  const int signal = stack_signal_from_header(head);
  if (signal <= 0) {
    ::close(fd);
    note = "stack file " + t.path + " has no trainwatch-stack header; ignored";
    return p;
  }
  const std::string status = read_file(proc_root + "/" + std::to_string(t.pid) + "/status", 4096);
  if (!catches_signal(status, signal)) {
    ::close(fd);
    note = "the rank no longer catches signal " + std::to_string(signal) + ": not signalled";
    return p;
  }
  off_t size = st.st_size;
  if (size > kMaxStackFileBytes) {
    const off_t header_end = static_cast<off_t>(head.find('\n') + 1);
    if (::ftruncate(fd, header_end) == 0) size = header_end;
  }
  if (::kill(t.pid, signal) != 0) {
    ::close(fd);
    note = "could not signal the rank";
    return p;
  }
  p.fd = fd;
  p.before = size;
  return p;
}

}  // namespace

std::string stack_file_path(const std::string& top, uid_t uid, std::string_view job, int32_t pid) {
  return reporter::user_slot_dir(top, uid) + "/" + std::string(job) + "." + std::to_string(pid) + ".stack";
}

int stack_signal_from_header(std::string_view text) {
  if (text.substr(0, kHeader.size()) != kHeader) return 0;
  text.remove_prefix(kHeader.size());
  int signal = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), signal);
  if (ec != std::errc() || end == text.data() || signal <= 0 || signal >= 65) return 0;
  return signal;
}

bool catches_signal(std::string_view status_text, int signal) {
  constexpr std::string_view kKey = "\nSigCgt:";
  size_t at = status_text.find(kKey);
  if (at == std::string_view::npos || signal <= 0 || signal > 64) return false;
  std::string_view rest = status_text.substr(at + kKey.size());
  while (!rest.empty() && (rest.front() == '\t' || rest.front() == ' ')) rest.remove_prefix(1);
  uint64_t mask = 0;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), mask, 16);
  if (ec != std::errc() || end == rest.data()) return false;
  return ((mask >> (signal - 1)) & 1U) != 0;
}

std::vector<StackCapture> capture_stacks(const std::vector<StackTarget>& targets,
                                         const std::string& proc_root) {
  std::vector<StackCapture> out(targets.size());
  std::vector<Pending> pending(targets.size());
  for (size_t i = 0; i < targets.size(); ++i) pending[i] = request(targets[i], proc_root, out[i].note);
  // A dump is complete once the file has grown and then stayed the same size for one poll.
  const auto deadline = std::chrono::steady_clock::now() + kStackWait;
  constexpr auto kPoll = std::chrono::milliseconds(5);
  bool waiting = true;
  while (waiting && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(kPoll);
    waiting = false;
    for (auto& p : pending) {
      if (p.fd < 0 || p.done) continue;
      const off_t size = size_of(p.fd);
      p.done = size > p.before && size == p.last_size;
      p.last_size = size;
      waiting = waiting || !p.done;
    }
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    Pending& p = pending[i];
    if (p.fd < 0) continue;
    const off_t size = size_of(p.fd);
    if (size > p.before) {
      const size_t length = std::min<size_t>(static_cast<size_t>(size - p.before), kMaxStackDumpBytes);
      auto stack = std::make_shared<PyStack>(parse_faulthandler_dump(read_at_most(p.fd, p.before, length)));
      if (stack->threads.empty()) {
        out[i].note = "the dump held no Python thread";
      } else {
        out[i].stack = std::move(stack);
      }
    } else {
      out[i].note = "no dump within " + std::to_string(kStackWait.count()) + " ms of the signal";
    }
    ::close(p.fd);
  }
  return out;
}

}  // namespace trainwatch::agent
