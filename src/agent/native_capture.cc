#include "agent/native_capture.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "reporter/process_info.h"

extern char** environ;

namespace trainwatch::agent {
namespace {

// Of eu-stack's stderr: enough for its one-line reason.
constexpr size_t kMaxErrorBytes = 1024;

bool stopped(char state) { return state == 'T' || state == 't'; }

// One eu-stack in flight.
struct Run {
  int32_t pid = 0;
  char before = '?';  // the rank's state before the attach
  pid_t child = -1;
  int out = -1;  // read ends; -1 once at end of file
  int err = -1;
  std::string text;
  std::string error;
  bool reaped = false;
  bool killed = false;
  int status = 0;
};

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Reads what is there; keeps up to `limit` and drops the rest, so a tool that prints more
// is never blocked on a full pipe. Closes the fd at end of file or on an error.
void drain(int& fd, std::string& into, size_t limit) {
  std::array<char, 16384> buf{};
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n > 0) {
      const size_t room = limit - std::min(limit, into.size());
      into.append(buf.data(), std::min(room, static_cast<size_t>(n)));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    close_fd(fd);
    return;
  }
}

// Starts `tool` for run.pid with stdout and stderr on pipes and stdin on /dev/null; "" or why not.
std::string spawn(const std::string& tool, Run& run) {
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC | O_NONBLOCK) != 0) return std::strerror(errno);
  if (::pipe2(err, O_CLOEXEC | O_NONBLOCK) != 0) {
    const int e = errno;
    ::close(out[0]);
    ::close(out[1]);
    return std::strerror(e);
  }
  // The child's ends are blocking: eu-stack writes as any program does.
  ::fcntl(out[1], F_SETFL, 0);
  ::fcntl(err[1], F_SETFL, 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  std::string pid = std::to_string(run.pid);
  std::string frames = std::to_string(kMaxNativeFrames + 1);  // one more: the parser sees the cut
  std::string p = "-p", m = "-m", n = "-n";
  std::array<char*, 7> argv{
      const_cast<char*>(tool.c_str()), p.data(), pid.data(), m.data(), n.data(), frames.data(), nullptr};
  // The agent's environment without DEBUGINFOD_URLS: elfutils would otherwise fetch debug
  // files over the network while the rank is stopped; the symbol tables on disk suffice.
  std::vector<char*> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string_view(*e).rfind("DEBUGINFOD_URLS=", 0) != 0) env.push_back(*e);
  }
  env.push_back(nullptr);
  const int rc = ::posix_spawn(&run.child, tool.c_str(), &actions, nullptr, argv.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  ::close(err[1]);
  if (rc != 0) {
    ::close(out[0]);
    ::close(err[0]);
    run.child = -1;
    return std::strerror(rc);
  }
  run.out = out[0];
  run.err = err[0];
  return {};
}

// Why a run gave what it gave, in a few words; "" when it ended cleanly.
std::string run_note(const Run& run, Millis deadline) {
  if (run.killed) return "eu-stack took longer than " + std::to_string(deadline.count()) + " ms: killed";
  if (WIFSIGNALED(run.status)) return "eu-stack died of signal " + std::to_string(WTERMSIG(run.status));
  const int code = WIFEXITED(run.status) ? WEXITSTATUS(run.status) : -1;
  if (code == 0 || code == 1) return {};
  if (run.error.find("Operation not permitted") != std::string::npos ||
      run.error.find("Permission denied") != std::string::npos) {
    return "eu-stack may not trace the rank (kernel.yama.ptrace_scope, or another user's process)";
  }
  // Its first line says why ("eu-stack: dwfl_linux_proc_report pid 9: No such file ...").
  const std::string first = run.error.substr(0, std::min(run.error.find('\n'), size_t{160}));
  return "eu-stack failed (exit " + std::to_string(code) + ")" + (first.empty() ? "" : ": " + first);
}

bool clean(const Run& run) { return !run.killed && WIFEXITED(run.status) && WEXITSTATUS(run.status) <= 1; }

}  // namespace

std::string find_on_path(std::string_view name, std::string_view path_env) {
  if (name.empty()) return {};
  if (name.find('/') != std::string_view::npos)
    return ::access(std::string(name).c_str(), X_OK) == 0 ? std::string(name) : std::string();
  while (true) {
    const size_t colon = path_env.find(':');
    std::string dir(path_env.substr(0, colon));
    std::string candidate = (dir.empty() ? "." : dir) + "/" + std::string(name);
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string_view::npos) return {};
    path_env.remove_prefix(colon + 1);
  }
}

std::vector<NativeCapture> capture_native_stacks(const std::string& tool, const std::vector<int32_t>& pids,
                                                 const std::string& proc_root, Millis deadline) {
  std::vector<NativeCapture> out(pids.size());
  std::vector<Run> runs(pids.size());
  for (size_t i = 0; i < pids.size(); ++i) {
    Run& run = runs[i];
    run.pid = pids[i];
    auto info = reporter::read_process(run.pid, proc_root);
    if (!info) {
      out[i].note = "the rank is gone";
      continue;
    }
    run.before = info->state;
    if (stopped(run.before)) {
      out[i].note = std::string("the rank is stopped (state ") + run.before + "): not traced";
      continue;
    }
    if (std::string why = spawn(tool, run); !why.empty()) out[i].note = "could not run " + tool + ": " + why;
  }
  // Read every pipe until it ends and reap every child that ended, until the deadline.
  const auto until = std::chrono::steady_clock::now() + deadline;
  for (;;) {
    std::vector<pollfd> fds;
    bool running = false;
    for (Run& run : runs) {
      if (run.child < 0 || run.reaped) continue;
      if (run.out >= 0) fds.push_back({run.out, POLLIN, 0});
      if (run.err >= 0) fds.push_back({run.err, POLLIN, 0});
      if (run.out < 0 && run.err < 0) {
        // ECHILD: the host program (an agent inside rank 0) ignores SIGCHLD, so the kernel
        // reaped it; its exit status is lost, and it counts as clean.
        const pid_t w = ::waitpid(run.child, &run.status, WNOHANG);
        run.reaped = w == run.child || (w < 0 && errno == ECHILD);
        running = running || !run.reaped;
      } else {
        running = true;
      }
    }
    const auto left = std::chrono::duration_cast<Millis>(until - std::chrono::steady_clock::now());
    if (!running || left.count() <= 0) break;
    // Both pipes closed but not yet exited: look again soon.
    const int wait_ms = fds.empty() ? 1 : static_cast<int>(left.count());
    ::poll(fds.data(), fds.size(), std::min<int>(wait_ms, static_cast<int>(left.count())));
    for (Run& run : runs) {
      if (run.child < 0 || run.reaped) continue;
      if (run.out >= 0) drain(run.out, run.text, kMaxStackDumpBytes);
      if (run.err >= 0) drain(run.err, run.error, kMaxErrorBytes);
    }
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    Run& run = runs[i];
    if (run.child < 0) continue;
    if (!run.reaped) {
      // Past the deadline. Reaping after SIGKILL waits only for the kernel to tear it down,
      // which detaches it from the rank first.
      const bool sent = ::kill(run.child, SIGKILL) == 0;
      while (::waitpid(run.child, &run.status, 0) < 0 && errno == EINTR) {
      }
      run.killed = sent && WIFSIGNALED(run.status) && WTERMSIG(run.status) == SIGKILL;
    }
    close_fd(run.out);
    close_fd(run.err);
    std::string note = run_note(run, deadline);
    if (!clean(run)) {
      auto now = reporter::read_process(run.pid, proc_root);
      if (now && stopped(now->state) && !stopped(run.before)) {
        ::kill(run.pid, SIGCONT);
        note += "; the rank was left stopped and was sent SIGCONT";
      }
    }
    auto stack = std::make_shared<NativeStack>(parse_eu_stack(run.text, run.pid));
    if (!stack->threads.empty()) {
      out[i].stack = std::move(stack);
    } else if (note.empty()) {
      note = "eu-stack printed no thread";
    }
    out[i].note = std::move(note);
  }
  return out;
}

}  // namespace trainwatch::agent
