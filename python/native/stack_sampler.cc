#include "python/native/stack_sampler.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>

#include "agent/stack_capture.h"

namespace trainwatch::python {
namespace {

// CPython's private dump of every thread's stack, the one faulthandler calls from its
// signal handlers and from its dump_traceback_later watchdog thread, which holds no GIL
// and is no Python thread, as ours. It is not in the public headers, so it is declared
// here with the signature of 3.11's Include/internal/pycore_traceback.h, looked up at run
// time (an interpreter without it still imports the module), and used only when the
// running interpreter is the version this was built for and that signature is known for.
using DumpTracebackThreads = const char* (*)(int fd, PyInterpreterState* interp,
                                             PyThreadState* current_tstate);

// The versions whose signature is the one above (checked at build and at run time).
constexpr bool known_signature(unsigned long hex_version) {
  const unsigned long major_minor = hex_version >> 16;
  return major_minor == 0x030B;
}

// The sampler's state. The atfork child handler touches only the plain fields (close(2)
// is async-signal-safe), never the thread.
struct Sampler {
  pthread_t thread{};
  bool running = false;
  int fifo_fd = -1;     // opened O_RDWR: the thread reads requests, stop() writes the wake-up
  int stack_fd = -1;    // our own copy of the stack file, O_APPEND
  int scratch_fd = -1;  // a memfd each dump is written to first (sampler_main says why)
  std::string fifo_path;
  PyInterpreterState* interp = nullptr;
  DumpTracebackThreads dump = nullptr;
  std::atomic<bool> stopping{false};
};

Sampler g_sampler;

// The dump without the block of the thread `ident`: holding the GIL makes the sampler a
// thread of the interpreter for the moment, and CPython lists it ("Current thread 0x…
// <no Python frame>"); the rank's stacks are what the agent asked for.
std::string without_thread(const std::string& dump, unsigned long ident) {
  char id[32];
  std::snprintf(id, sizeof id, "0x%016lx", ident);
  const std::string mark = std::string(id) + " (most recent call first):";
  const size_t at = dump.find(mark);
  if (at == std::string::npos) return dump;
  const size_t line = dump.rfind('\n', at);
  const size_t begin = line == std::string::npos ? 0 : line + 1;
  const size_t blank = dump.find("\n\n", at);
  const size_t end = blank == std::string::npos ? dump.size() : blank + 2;
  return dump.substr(0, begin) + dump.substr(end);
}

// What the dump wrote to the scratch file, at most kMaxStackFileBytes.
std::string read_scratch() {
  std::string text;
  if (::lseek(g_sampler.scratch_fd, 0, SEEK_SET) != 0) return text;
  char chunk[16 * 1024];
  while (text.size() < static_cast<size_t>(agent::kMaxStackFileBytes)) {
    const ssize_t n = ::read(g_sampler.scratch_fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(chunk, static_cast<size_t>(n));
  }
  return text;
}

void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(static_cast<size_t>(n));
  }
}

void* sampler_main(void*) {
  char requests[64];  // every request already waiting is answered by one dump
  for (;;) {
    const ssize_t n = ::read(g_sampler.fifo_fd, requests, sizeof requests);
    if (n < 0 && errno == EINTR) continue;
    // EOF cannot come while the sampler holds its own write end; an error ends the thread.
    if (n <= 0 || g_sampler.stopping.load()) return nullptr;
    if (::ftruncate(g_sampler.scratch_fd, 0) != 0 || ::lseek(g_sampler.scratch_fd, 0, SEEK_SET) != 0)
      continue;
    // The walk of the thread list and the frames is made holding the GIL: without it, a
    // rank pushing and popping frames (or a thread ending) frees what the walk is reading,
    // and the rank crashed with SIGSEGV in about one run in ten under steady requests.
    // Waiting for the GIL interrupts nothing the rank is blocked in: a rank blocked in a
    // system call or a collective has released it; one running Python yields it within
    // the switch interval (5 ms). A rank holding it in C code for longer is not answered
    // until it lets go: the agent's wait ends first and says no stack came.
    // The returned text is an error such as "unable to get the interpreter state"; the
    // agent then finds no thread in what was appended and says so in its note.
    const PyGILState_STATE gil = PyGILState_Ensure();
    const char* error = g_sampler.dump(g_sampler.scratch_fd, g_sampler.interp, nullptr);
    PyGILState_Release(gil);
    std::string dump = without_thread(read_scratch(), static_cast<unsigned long>(pthread_self()));
    if (error != nullptr) dump += std::string(error) + "\n";
    // The agent reads the dump as soon as the end line is there, not after a quiet poll.
    dump += agent::kStackDumpEnd;
    write_all(g_sampler.stack_fd, dump);
  }
}

void forget_in_child() {
  if (!g_sampler.running) return;
  ::close(g_sampler.fifo_fd);
  ::close(g_sampler.stack_fd);
  ::close(g_sampler.scratch_fd);
  g_sampler.fifo_fd = g_sampler.stack_fd = g_sampler.scratch_fd = -1;
  g_sampler.running = false;
}

std::string unsupported() {
#if PY_VERSION_HEX >= 0x030B0000
  if (!known_signature(PY_VERSION_HEX)) return "built for a Python whose private stack dump is not known";
  if (!known_signature(Py_Version)) return "this Python's private stack dump is not the one it was built for";
#else
  return "built for a Python older than 3.11";
#endif
  if (::dlsym(RTLD_DEFAULT, "_Py_DumpTracebackThreads") == nullptr)
    return "this Python has no _Py_DumpTracebackThreads";
  return {};
}

// The FIFO, made afresh (a file of that name is a dead process's with the same pid), opened
// by us for reading and writing so it never reads EOF and opening it never blocks.
// group_writable: the group's agent writes requests, as it reads the stack file.
std::string open_fifo(const std::string& path, bool group_writable, int& fd) {
  ::unlink(path.c_str());
  const mode_t mode = group_writable ? 0620 : 0600;
  if (::mkfifo(path.c_str(), mode) != 0) return "cannot make " + path + ": " + std::strerror(errno);
  fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode) || ::fchmod(fd, mode) != 0) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    fd = -1;
    ::unlink(path.c_str());
    return "cannot open " + path + ": " + why;
  }
  return {};
}

// The thread with every signal blocked, so no signal meant for the rank is delivered to
// it, and a small stack: it only reads and dumps.
bool start_thread() {
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  const bool ok = pthread_create(&g_sampler.thread, &attr, sampler_main, nullptr) == 0;
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return ok;
}

std::string start(const std::string& fifo_path, int stack_fd, bool group_writable) {
  if (g_sampler.running) return {};
  if (std::string why = unsupported(); !why.empty()) return why;
  static const bool kAtforkRegistered = pthread_atfork(nullptr, nullptr, forget_in_child) == 0;
  if (!kAtforkRegistered) return "cannot register the fork handler";
  int fifo_fd = -1;
  if (std::string why = open_fifo(fifo_path, group_writable, fifo_fd); !why.empty()) return why;
  const int own_stack_fd = ::fcntl(stack_fd, F_DUPFD_CLOEXEC, 3);
  const int scratch_fd = own_stack_fd < 0 ? -1 : ::memfd_create("trainwatch-stack", MFD_CLOEXEC);
  if (scratch_fd < 0) {
    const std::string why = std::strerror(errno);
    ::close(fifo_fd);
    if (own_stack_fd >= 0) ::close(own_stack_fd);
    ::unlink(fifo_path.c_str());
    return "cannot copy the stack file's descriptor or make the scratch file: " + why;
  }
  g_sampler.fifo_fd = fifo_fd;
  g_sampler.stack_fd = own_stack_fd;
  g_sampler.scratch_fd = scratch_fd;
  g_sampler.fifo_path = fifo_path;
  g_sampler.interp = PyInterpreterState_Main();
  g_sampler.dump = reinterpret_cast<DumpTracebackThreads>(::dlsym(RTLD_DEFAULT, "_Py_DumpTracebackThreads"));
  g_sampler.stopping.store(false);
  if (!start_thread()) {
    ::close(fifo_fd);
    ::close(own_stack_fd);
    ::close(scratch_fd);
    ::unlink(fifo_path.c_str());
    g_sampler.fifo_fd = g_sampler.stack_fd = g_sampler.scratch_fd = -1;
    return "cannot start the sampler thread";
  }
  g_sampler.running = true;
  return {};
}

// Waits for the thread for at most 2 s: it is either in read(), woken by our byte, or in
// the middle of one dump. A thread that does not end in that time is left behind rather
// than waited for, with its descriptors open, so it can still do nothing worse than write.
void stop() {
  if (!g_sampler.running) return;
  g_sampler.running = false;
  ::unlink(g_sampler.fifo_path.c_str());
  g_sampler.stopping.store(true);
  const char wake = 0;
  [[maybe_unused]] ssize_t w = ::write(g_sampler.fifo_fd, &wake, 1);
  struct timespec deadline {};
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 2;
  if (pthread_timedjoin_np(g_sampler.thread, nullptr, &deadline) != 0) return;
  ::close(g_sampler.fifo_fd);
  ::close(g_sampler.stack_fd);
  ::close(g_sampler.scratch_fd);
  g_sampler.fifo_fd = g_sampler.stack_fd = g_sampler.scratch_fd = -1;
}

}  // namespace

PyObject* start_stack_sampler(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 3)
    return PyErr_Format(PyExc_TypeError, "_start_stack_sampler(fifo_path, stack_fd, group_writable)");
  const char* path = PyUnicode_AsUTF8(args[0]);
  if (path == nullptr) return nullptr;
  const long fd = PyLong_AsLong(args[1]);
  if (fd == -1 && PyErr_Occurred()) return nullptr;
  const int group_writable = PyObject_IsTrue(args[2]);
  if (group_writable < 0) return nullptr;
  const std::string why = start(path, static_cast<int>(fd), group_writable != 0);
  if (why.empty()) Py_RETURN_NONE;
  return PyUnicode_FromString(why.c_str());
}

PyObject* stop_stack_sampler(PyObject*, PyObject*) {
  // The GIL is let go while the thread is joined: it may be waiting for it to dump.
  Py_BEGIN_ALLOW_THREADS
  stop();
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
}

}  // namespace trainwatch::python
