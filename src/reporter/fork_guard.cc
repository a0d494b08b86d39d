#include "reporter/fork_guard.h"

#include <pthread.h>
#include <unistd.h>

#include <mutex>

namespace trainwatch::reporter {
namespace {

std::atomic<int32_t> g_pid{0};

// Runs in the child only, single-threaded, before fork() returns there.
void refresh_pid_in_child() { g_pid.store(static_cast<int32_t>(::getpid()), std::memory_order_relaxed); }

}  // namespace

int32_t current_pid() {
  int32_t pid = g_pid.load(std::memory_order_relaxed);
  return pid != 0 ? pid : watch_forks();
}

int32_t watch_forks() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_pid.store(static_cast<int32_t>(::getpid()), std::memory_order_relaxed);
    pthread_atfork(nullptr, nullptr, refresh_pid_in_child);
  });
  return g_pid.load(std::memory_order_relaxed);
}

}  // namespace trainwatch::reporter
