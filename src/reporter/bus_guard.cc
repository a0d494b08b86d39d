#include "reporter/bus_guard.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>

namespace trainwatch::reporter {
namespace {

// One guarded mapping. state: kFree -> kBusy (being filled or emptied) -> kActive. The
// handler reads only kActive entries; their other fields were written before the release
// store that made them active and do not change until the entry leaves kActive.
enum : int { kFree = 0, kBusy = 1, kActive = 2 };
struct Entry {
  std::atomic<int> state{kFree};
  std::atomic<uintptr_t> base{0};  // read by unguard_mapping while another entry fills
  size_t size = 0;
  int fd = -1;
  int prot = 0;
  std::atomic<bool> lost{false};
  size_t line_len = 0;
  char line[kMaxLostLine];
};

Entry g_entries[kMaxGuardedMappings];
struct sigaction g_previous {};
std::once_flag g_installed;

// Async-signal-safe: mmap and write are plain system calls; no lock, no allocation.
bool replace_with_zero_pages(Entry& e) {
  // NOLINTNEXTLINE(performance-no-int-to-ptr): base is an integer so the handler reads it atomically.
  void* got = ::mmap(reinterpret_cast<void*>(e.base.load(std::memory_order_relaxed)), e.size, e.prot,
                     MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (got == MAP_FAILED) return false;
  if (!e.lost.exchange(true) && e.line_len > 0) (void)!::write(STDERR_FILENO, e.line, e.line_len);
  return true;
}

void chain(int sig, siginfo_t* info, void* context) {
  if (g_previous.sa_flags & SA_SIGINFO) {
    if (g_previous.sa_sigaction != nullptr) g_previous.sa_sigaction(sig, info, context);
    return;
  }
  if (g_previous.sa_handler == SIG_IGN) return;
  if (g_previous.sa_handler == SIG_DFL) {
    // Die as we would have without this handler: default action, signal delivered again
    // when the handler returns (it is blocked until then).
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigemptyset(&dfl.sa_mask);
    ::sigaction(sig, &dfl, nullptr);
    ::raise(sig);
    return;
  }
  g_previous.sa_handler(sig);
}

void on_sigbus(int sig, siginfo_t* info, void* context) {
  int saved_errno = errno;
  bool repaired = false;
  if (info != nullptr && info->si_code > 0) {
    // A fault raised by the kernel: si_addr is the address touched.
    auto addr = reinterpret_cast<uintptr_t>(info->si_addr);
    for (auto& e : g_entries) {
      if (e.state.load(std::memory_order_acquire) != kActive) continue;
      uintptr_t base = e.base.load(std::memory_order_relaxed);
      if (addr >= base && addr - base < e.size) {
        repaired = replace_with_zero_pages(e);
        break;
      }
    }
  } else {
    // Sent by a process (another handler re-raising a fault): repair every guarded mapping
    // whose file shrank; the access that faulted is retried when the handlers return.
    for (auto& e : g_entries) {
      if (e.state.load(std::memory_order_acquire) != kActive || e.lost.load()) continue;
      struct stat st {};
      if (::fstat(e.fd, &st) == 0 && static_cast<size_t>(st.st_size) < e.size) {
        repaired = replace_with_zero_pages(e) || repaired;
      }
    }
  }
  errno = saved_errno;
  if (!repaired) chain(sig, info, context);
}

void install() {
  struct sigaction sa {};
  sa.sa_sigaction = on_sigbus;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
  ::sigemptyset(&sa.sa_mask);
  ::sigaction(SIGBUS, &sa, &g_previous);
}

}  // namespace

bool guard_mapping(void* base, size_t size, int fd, int prot, const char* lost_line) {
  std::call_once(g_installed, install);
  for (auto& e : g_entries) {
    int expected = kFree;
    if (!e.state.compare_exchange_strong(expected, kBusy, std::memory_order_acquire)) continue;
    e.base.store(reinterpret_cast<uintptr_t>(base), std::memory_order_relaxed);
    e.size = size;
    e.fd = fd;
    e.prot = prot;
    e.lost.store(false);
    size_t len = lost_line ? ::strnlen(lost_line, kMaxLostLine) : 0;
    if (len > 0) std::memcpy(e.line, lost_line, len);
    if (len == kMaxLostLine) e.line[len - 1] = '\n';  // cut short: still one whole line
    e.line_len = len;
    e.state.store(kActive, std::memory_order_release);
    return true;
  }
  return false;
}

void unguard_mapping(void* base) {
  auto addr = reinterpret_cast<uintptr_t>(base);
  for (auto& e : g_entries) {
    int expected = kActive;
    if (e.base.load(std::memory_order_relaxed) != addr ||
        !e.state.compare_exchange_strong(expected, kBusy, std::memory_order_acq_rel))
      continue;
    e.base.store(0, std::memory_order_relaxed);
    e.fd = -1;
    e.state.store(kFree, std::memory_order_release);
    return;
  }
}

bool mapping_lost(const void* base) {
  auto addr = reinterpret_cast<uintptr_t>(base);
  for (const auto& e : g_entries) {
    if (e.state.load(std::memory_order_acquire) == kActive && e.base.load(std::memory_order_relaxed) == addr)
      return e.lost.load();
  }
  return false;
}

}  // namespace trainwatch::reporter
