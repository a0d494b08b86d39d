#include "agent/own_threads.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <map>
#include <mutex>

#include "reporter/process_info.h"

namespace trainwatch::agent {
namespace {

// Guards both: registration on each new thread, reading on the sampler.
std::mutex g_mu;
std::map<int32_t, uint64_t> g_threads;  // tid -> its CPU ticks at the last reading
uint64_t g_ended_ticks = 0;             // what threads that ended had used when last read

}  // namespace

void register_own_thread() {
  const auto tid = static_cast<int32_t>(::syscall(SYS_gettid));
  std::lock_guard lock(g_mu);
  g_threads.emplace(tid, 0);
}

uint64_t own_threads_cpu_ticks(const std::string& proc_root) {
  std::lock_guard lock(g_mu);
  uint64_t total = g_ended_ticks;
  for (auto it = g_threads.begin(); it != g_threads.end();) {
    auto info = reporter::read_process(it->first, proc_root + "/self/task");
    if (!info) {  // ended: what it used stays the agent's
      g_ended_ticks += it->second;
      total += it->second;
      it = g_threads.erase(it);
      continue;
    }
    it->second = info->cpu_ticks;
    total += it->second;
    ++it;
  }
  return total;
}

}  // namespace trainwatch::agent
