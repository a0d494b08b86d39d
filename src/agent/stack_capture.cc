#include "agent/stack_capture.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <thread>

#include "reporter/slot_dir.h"

namespace trainwatch::agent {
namespace {

constexpr std::string_view kSignalHeader = "trainwatch-stack 1 signal=";
constexpr std::string_view kFifoHeader = "trainwatch-stack 2 request=fifo";

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
  bool ends_marked = false;  // the sampler's dumps end with kStackDumpEnd
  bool done = false;
};

// Whether the file's last bytes are kStackDumpEnd.
bool ends_with_dump_end(int fd, off_t size) {
  const auto length = static_cast<off_t>(kStackDumpEnd.size());
  return size >= length && read_at_most(fd, size - length, kStackDumpEnd.size()) == kStackDumpEnd;
}

off_t size_of(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 ? st.st_size : -1;
}

// Writes one byte to the rank's request FIFO; false with the note set when nobody was asked.
// Only a FIFO of the rank's user, checked before and after opening (the directory is the
// user's). O_NONBLOCK: opening fails with ENXIO when no sampler holds it open (the rank
// exited, or was killed before removing it) instead of waiting for one; a full pipe already
// holds requests the sampler has yet to read, which one dump answers. SIGPIPE is blocked
// around the write, since a rank that exits between open and write must not kill the agent
// (the CLI's, or one inside another rank).
bool ask_through_fifo(const std::string& fifo, uid_t uid, std::string& note) {
  struct stat st {};
  if (::lstat(fifo.c_str(), &st) != 0 || !S_ISFIFO(st.st_mode) || st.st_uid != uid) {
    note = "no request FIFO " + fifo + " of the rank's user: not asked";
    return false;
  }
  const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    note = errno == ENXIO ? "nobody listens on the rank's request FIFO (its sampler has ended)"
                          : "cannot open the rank's request FIFO";
    return false;
  }
  struct stat opened {};
  if (::fstat(fd, &opened) != 0 || opened.st_ino != st.st_ino || opened.st_dev != st.st_dev) {
    ::close(fd);
    note = "the rank's request FIFO changed while it was opened: not asked";
    return false;
  }
  sigset_t pipe_signal, previous;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, &previous);
  const char request = 1;
  const bool asked = ::write(fd, &request, 1) == 1 || errno == EAGAIN;
  if (!asked && errno == EPIPE) {
    const struct timespec now {};
    ::sigtimedwait(&pipe_signal, nullptr, &now);  // the SIGPIPE of this write, not delivered
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  ::close(fd);
  if (!asked) note = "nobody listens on the rank's request FIFO (its sampler has ended)";
  return asked;
}

// Sends the header's signal, only to a rank that still catches it; false with the note set.
bool ask_by_signal(const StackTarget& t, int signal, const std::string& proc_root, std::string& note) {
  const std::string status = read_file(proc_root + "/" + std::to_string(t.pid) + "/status", 4096);
  if (!catches_signal(status, signal)) {
    note = "the rank no longer catches signal " + std::to_string(signal) + ": not signalled";
    return false;
  }
  if (::kill(t.pid, signal) != 0) {
    note = "could not signal the rank";
    return false;
  }
  return true;
}

// Opens the stack file, checks it, cuts it back when it grew too big, and asks the rank
// the way its header says. Returns the open file or sets the note.
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
  const StackRequest how = stack_request_from_header(head);
  if (how.way == StackRequest::Way::kNone) {
    ::close(fd);
    note = "stack file " + t.path + " has no trainwatch-stack header; ignored";
    return p;
  }
  off_t size = st.st_size;
  if (size > kMaxStackFileBytes) {
    const off_t header_end = static_cast<off_t>(head.find('\n') + 1);
    if (::ftruncate(fd, header_end) == 0) size = header_end;
  }
  const bool asked = how.way == StackRequest::Way::kFifo
                         ? ask_through_fifo(stack_request_path(t.path), t.uid, note)
                         : ask_by_signal(t, how.signal, proc_root, note);
  if (!asked) {
    ::close(fd);
    return p;
  }
  p.fd = fd;
  p.before = size;
  p.ends_marked = how.way == StackRequest::Way::kFifo;
  return p;
}

}  // namespace

std::string stack_file_path(const std::string& top, uid_t uid, std::string_view job, int32_t pid) {
  return reporter::user_slot_dir(top, uid) + "/" + std::string(job) + "." + std::to_string(pid) + ".stack";
}

std::string stack_request_path(const std::string& stack_path) { return stack_path + "req"; }

StackRequest stack_request_from_header(std::string_view text) {
  StackRequest out;
  if (text.substr(0, kFifoHeader.size()) == kFifoHeader) {
    text.remove_prefix(kFifoHeader.size());
    if (text.empty() || text.front() == '\n') out.way = StackRequest::Way::kFifo;
    return out;
  }
  if (text.substr(0, kSignalHeader.size()) != kSignalHeader) return out;
  text.remove_prefix(kSignalHeader.size());
  int signal = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), signal);
  if (ec != std::errc() || end == text.data() || signal <= 0 || signal >= 65) return out;
  out.way = StackRequest::Way::kSignal;
  out.signal = signal;
  return out;
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
  const auto deadline = std::chrono::steady_clock::now() + kStackWait;
  constexpr auto kPoll = std::chrono::milliseconds(5);
  bool waiting = true;
  while (waiting && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(kPoll);
    waiting = false;
    for (auto& p : pending) {
      if (p.fd < 0 || p.done) continue;
      const off_t size = size_of(p.fd);
      // A dump is complete at its end line, or, from faulthandler, once the file has grown
      // and then stayed the same size for one poll.
      p.done = size > p.before && (p.ends_marked ? ends_with_dump_end(p.fd, size) : size == p.last_size);
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
      out[i].note = "no dump within " + std::to_string(kStackWait.count()) + " ms of the request";
    }
    ::close(p.fd);
  }
  return out;
}

}  // namespace trainwatch::agent
