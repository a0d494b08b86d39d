// `trainwatch run --ping URL -- CMD ARGS…`: wraps a job in start and finish pings.
//
//   1. sends /start (a failure is a warning on stderr: the job runs anyway);
//   2. runs CMD with its stdout and stderr passed through pipes, keeping the last 10 KB;
//   3. sends the finish: success for exit 0, /{code} otherwise (128 + N for a signal),
//      with the kept output as the body;
//   4. exits like CMD: the same code, or the same signal raised on itself.
//
// Signals: SIGINT and SIGQUIT from a terminal reach the whole process group, CMD
// included, so this process ignores them and lets CMD decide; SIGTERM and SIGHUP sent to
// this process alone (a scheduler stopping the job) are forwarded to CMD.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/output_tail.h"
#include "cli/ping_client.h"

namespace trainwatch::cli {
namespace {

struct RunArgs {
  std::string url;
  std::vector<std::string> command;
};

volatile sig_atomic_t g_child = 0;

void forward_signal(int sig) {
  if (g_child > 0) kill(static_cast<pid_t>(g_child), sig);
}

// Writes all of `data` to `fd`, giving up on errors: a closed stdout must not stop the
// job's output from being drained (or the job would block on a full pipe).
void write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data += n;
    size -= static_cast<size_t>(n);
  }
}

// A start ping must not hold the job back long when the server is away.
PingClientOptions start_options() {
  PingClientOptions o;
  o.attempts = 2;
  o.connect_timeout = Millis(2000);
  o.total_timeout = Millis(5000);
  o.first_backoff = Millis(250);
  return o;
}

void warn(const Error& error) {
  std::cerr << "trainwatch run: warning: ping failed: " << error.message << "\n";
}

struct Child {
  pid_t pid = -1;
  int out = -1;
  int err = -1;
  std::string exec_error;  // set when CMD could not be started
};

// `child_mask` is the signal mask CMD starts with (the caller blocks the forwarded
// signals around the fork; CMD must not inherit that).
Child spawn(const std::vector<std::string>& command, const sigset_t& child_mask) {
  Child child;
  int out[2], err[2], status[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 || pipe2(status, O_CLOEXEC) != 0) {
    child.exec_error = std::string("cannot create pipes: ") + std::strerror(errno);
    return child;
  }
  std::vector<char*> argv;
  argv.reserve(command.size() + 1);
  for (const auto& arg : command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  child.pid = fork();
  if (child.pid == 0) {
    sigprocmask(SIG_SETMASK, &child_mask, nullptr);
    dup2(out[1], STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    execvp(argv[0], argv.data());
    // Only reached when exec failed: tell the parent why through the status pipe.
    const int e = errno;
    write_all(status[1], reinterpret_cast<const char*>(&e), sizeof e);
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  close(status[1]);
  if (child.pid < 0) {
    child.exec_error = std::string("cannot fork: ") + std::strerror(errno);
    close(out[0]);
    close(err[0]);
    close(status[0]);
    return child;
  }
  int e = 0;
  // The status pipe closes on a successful exec (O_CLOEXEC): 0 bytes means CMD runs.
  ssize_t n;
  do {
    n = read(status[0], &e, sizeof e);
  } while (n < 0 && errno == EINTR);
  close(status[0]);
  if (n == static_cast<ssize_t>(sizeof e)) child.exec_error = command[0] + ": " + std::strerror(e);
  child.out = out[0];
  child.err = err[0];
  return child;
}

// Passes CMD's output through until both pipes close, or until CMD has exited and its
// pipes stay quiet (a daemon it left behind may hold them open for ever).
int pump(Child& child, OutputTail& tail) {
  pollfd fds[2] = {{child.out, POLLIN, 0}, {child.err, POLLIN, 0}};
  const int targets[2] = {STDOUT_FILENO, STDERR_FILENO};
  int open_pipes = 2;
  int status = 0;
  bool exited = false;
  char buffer[64 * 1024];
  while (open_pipes > 0) {
    // After CMD exited, 200 ms of silence ends the wait for what is left in the pipes.
    const int timeout_ms = exited ? 200 : 100;
    int ready = poll(fds, 2, timeout_ms);
    if (ready < 0 && errno != EINTR) break;
    if (ready == 0 && exited) break;
    for (int i = 0; i < 2 && ready > 0; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_pipes;
        continue;
      }
      write_all(targets[i], buffer, static_cast<size_t>(n));
      tail.append(std::string_view(buffer, static_cast<size_t>(n)));
    }
    if (!exited && waitpid(child.pid, &status, WNOHANG) == child.pid) exited = true;
  }
  for (auto& fd : fds) {
    if (fd.fd >= 0) close(fd.fd);
  }
  if (!exited) {
    while (waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  return status;
}

// Ends this process the way CMD ended: a signal is raised again (without a core dump of
// our own), so a shell or scheduler sees "killed by SIGKILL", not "exit 137".
[[noreturn]] void exit_like(int status) {
  std::cout.flush();
  std::cerr.flush();
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, nullptr);
    raise(sig);
    _exit(128 + sig);  // a signal that does not end a process by default
  }
  _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

int run_job(const RunArgs& args) {
  if (auto started = send_ping(ping_url(args.url, PingKind::kStart, 0), nullptr, start_options()); !started) {
    warn(started.error());
    std::cerr << "trainwatch run: the command runs anyway\n";
  }
  signal(SIGPIPE, SIG_IGN);  // a closed stdout shows up as a write error, handled above
  // SIGTERM or SIGHUP arriving between the fork and the handler stays pending until the
  // handler can forward it, instead of killing this process and orphaning CMD.
  sigset_t forwarded, before;
  sigemptyset(&forwarded);
  sigaddset(&forwarded, SIGTERM);
  sigaddset(&forwarded, SIGHUP);
  sigprocmask(SIG_BLOCK, &forwarded, &before);
  Child child = spawn(args.command, before);
  OutputTail tail;
  int status = 0;
  if (child.pid > 0 && child.exec_error.empty()) {
    g_child = child.pid;
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    struct sigaction forward {};
    forward.sa_handler = forward_signal;
    sigemptyset(&forward.sa_mask);
    sigaction(SIGTERM, &forward, nullptr);
    sigaction(SIGHUP, &forward, nullptr);
    sigprocmask(SIG_SETMASK, &before, nullptr);
    status = pump(child, tail);
    g_child = 0;
  } else {
    sigprocmask(SIG_SETMASK, &before, nullptr);
    // As a shell does: 127 when the command cannot be run.
    if (child.pid > 0) pump(child, tail);
    std::cerr << "trainwatch run: cannot run " << child.exec_error << "\n";
    tail.append("trainwatch run: cannot run " + child.exec_error + "\n");
    status = 127 << 8;
  }

  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  const std::string body = tail.text();
  auto sent = send_ping(ping_url(args.url, code == 0 ? PingKind::kSuccess : PingKind::kExitCode, code), &body,
                        PingClientOptions{});
  if (!sent) warn(sent.error());
  exit_like(status);
}

}  // namespace

Command add_run_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("run", "Run a command between start and finish heartbeat pings");
  auto args = std::make_shared<RunArgs>();
  sub->add_option("--ping", args->url, "The monitor's ping URL, e.g. http://host:8080/ping/TOKEN")
      ->required();
  sub->add_option("command", args->command, "The command and its arguments, after --")->required();
  return Command{sub, [args] { return run_job(*args); }};
}

}  // namespace trainwatch::cli
