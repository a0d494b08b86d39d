#include "python/native/agent_host.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "agent/agent.h"
#include "python/native/role_lock.h"

namespace trainwatch::python {
namespace {

// How often a rank waiting for the role tries the lock: the node goes unwatched for at
// most this long after its agent's host ends (plus the new agent's first sample).
constexpr Millis kRoleRetry{200};

SystemClock g_clock;

// Everything one process knows about its agent. Never destroyed: at exit the agent is
// stopped by stop_agent (trainwatch's atexit hook), and a destructor run by a forked child
// would join threads that exist only in its parent.
struct Host {
  std::mutex mu;  // guards everything below
  std::condition_variable cv;
  std::optional<RoleLock> lock;
  std::unique_ptr<agent::Agent> agent;
  std::unique_ptr<std::thread> waiter;  // waits for the role
  // What the waiter would start: at exit, a rank still waiting takes the role one last time
  // if it is free (the holder died, perhaps by the same fault that ends this rank) and sends
  // the node's last report, so the host's death is told, with its signal (stop below).
  std::optional<agent::AgentOptions> waiting_for;
  bool stopping = false;
};

std::atomic<Host*> g_host{nullptr};

Host& host() {
  Host* h = g_host.load();
  if (h == nullptr) {
    h = new Host;  // NOLINT(cppcoreguidelines-owning-memory): lives as long as the process
    g_host.store(h);
  }
  return *h;
}

// In a forked child (only the forking thread exists): forget the parent's host without
// touching its mutex, threads or agent, and close the child's copy of the role lock.
void forget_host_in_child() {
  Host* h = g_host.exchange(nullptr);
  if (h != nullptr && h->lock) h->lock->forget_in_child();
}

void watch_forks() {
  static std::once_flag once;
  std::call_once(once, [] { pthread_atfork(nullptr, nullptr, forget_host_in_child); });
}

// Starts the agent; with h.mu held. "" or why not.
std::string start_locked(Host& h, const agent::AgentOptions& o, bool serve_http) {
  auto r = agent::Agent::start(o, g_clock, serve_http);
  if (!r) return r.error().message;
  h.agent = std::move(*r);
  return "";
}

// A waiting rank's thread: after `defer`, takes the role once it comes free, then starts
// the agent.
void wait_for_role(Host* h, agent::AgentOptions o, bool serve_http, Millis defer) {
  std::unique_lock lock(h->mu);
  if (h->cv.wait_for(lock, defer, [&] { return h->stopping; })) return;
  while (!h->stopping) {
    if (h->lock->try_take()) {
      if (std::string error = start_locked(*h, o, serve_http); !error.empty()) {
        std::fprintf(stderr, "trainwatch: took over the node's agent but could not start it: %s\n",
                     error.c_str());
      }
      return;
    }
    h->cv.wait_for(lock, kRoleRetry, [&] { return h->stopping; });
  }
}

// Stops the agent or the wait, and gives the role up. Without the GIL. `last_words`: the
// process is exiting, and a rank that waited for the role takes it if it is free, for one
// sample and one final report. gloo's peers of a rank killed by SIGKILL fail within 0.1-0.4 s,
// often before their waiters' next try (kRoleRetry): without this, a node whose agent died
// with its host rank would go silent and the host's death untold.
void stop(Host& h, bool last_words) {
  std::unique_ptr<std::thread> waiter;
  {
    std::lock_guard lock(h.mu);
    h.stopping = true;
    h.cv.notify_all();
    waiter = std::move(h.waiter);
  }
  if (waiter && waiter->joinable()) waiter->join();
  std::lock_guard lock(h.mu);
  if (last_words && !h.agent && h.waiting_for && h.lock && h.lock->try_take()) {
    auto r = agent::Agent::start(*h.waiting_for, g_clock, /*serve_http=*/false, /*run_threads=*/false);
    if (r) h.agent = std::move(*r);
  }
  if (h.agent) h.agent->stop();  // its last report goes out first...
  h.agent.reset();
  h.lock.reset();  // ...then the next rank may take the role
  h.waiting_for.reset();
  h.stopping = false;
}

}  // namespace

PyObject* start_agent(PyObject*, PyObject* args, PyObject* kwargs) {
  static const char* kwlist[] = {
      "job",          "dir",           "host",           "port",         "checkpoint_dir",
      "nvme_path",    "stall_after_s", "gpu_memory_pct", "disk_free_gb", "host_memory_free_gb",
      "nvml_library", "server",        "token",          "node",         "report_every_s",
      "take_over",    "defer_s",       nullptr};
  const char *job = nullptr, *dir = nullptr, *host_name = "127.0.0.1", *ckpt = nullptr, *nvme = nullptr,
             *nvml = nullptr, *server = nullptr, *token = nullptr, *node = nullptr;
  int port = 8765;
  int take_over = 0;
  double stall = 600, gpu_pct = 95, disk_gb = 10, mem_gb = 1, report_every = 5, defer_s = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "ss|sizzddddzzzzdpd", const_cast<char**>(kwlist), &job, &dir,
                                   &host_name, &port, &ckpt, &nvme, &stall, &gpu_pct, &disk_gb, &mem_gb,
                                   &nvml, &server, &token, &node, &report_every, &take_over, &defer_s)) {
    return nullptr;
  }
  agent::AgentOptions o;
  o.job = job;
  o.dir = dir;
  o.host = host_name;
  o.port = static_cast<uint16_t>(port < 0 ? 0 : port);
  const bool serve_http = port >= 0;  // port < 0: push reports only, no /health
  if (server && *server) o.server_url = server;
  if (token && *token) o.token = token;
  if (node && *node) o.node = node;
  if (report_every >= 0.1) o.report_every = Millis(static_cast<int64_t>(report_every * 1000));
  if (ckpt && *ckpt) o.disks.push_back({"checkpoint_dir", ckpt});
  if (nvme && *nvme) o.disks.push_back({"nvme", nvme});
  if (nvml && *nvml) o.nvml_library = nvml;
  o.thresholds.stall_after = Millis(static_cast<int64_t>(stall * 1000));
  o.thresholds.gpu_memory_pct = gpu_pct;
  o.thresholds.disk_free_bytes = static_cast<uint64_t>(disk_gb * 1e9);
  o.thresholds.host_memory_free_bytes = static_cast<uint64_t>(mem_gb * 1e9);

  watch_forks();
  Host& h = host();
  std::string error;
  bool waiting = false;
  long bound = 0;
  Py_BEGIN_ALLOW_THREADS  // the lock, binding and the first sample touch no Python state
  {
    stop(h, false);  // a second init() replaces the first agent
    std::lock_guard lock(h.mu);
    const Millis defer(static_cast<int64_t>(std::max(0.0, defer_s) * 1000));
    if (auto opened = RoleLock::open(role_lock_path(o.dir, o.job)); !opened) {
      // No lock file (the slot directory is unusable, or not made yet): no role to pass on.
      // The first in line runs the agent alone, as every agent did before roles; the others
      // leave it to that one.
      if (defer.count() == 0) {
        error = start_locked(h, o, serve_http);
        if (h.agent) bound = h.agent->port();
      } else {
        waiting = true;
      }
    } else {
      h.lock.emplace(std::move(*opened));
      if (defer.count() == 0 && h.lock->try_take()) {
        error = start_locked(h, o, serve_http);
        if (h.agent) bound = h.agent->port();
      } else if (take_over) {
        waiting = true;
        h.waiting_for = o;
        h.waiter = std::make_unique<std::thread>(wait_for_role, &h, o, serve_http, defer);
      } else {
        error = "another process of this node already runs the agent of job '" + o.job + "'";
      }
    }
    if (!error.empty()) h.lock.reset();
  }
  Py_END_ALLOW_THREADS
  if (!error.empty()) {
    std::fprintf(stderr, "trainwatch: %s not started: %s; training continues without it\n",
                 serve_http ? "health server" : "agent", error.c_str());
    Py_RETURN_NONE;
  }
  return PyLong_FromLong(waiting ? 0 : bound);
}

PyObject* stop_agent(PyObject*, PyObject*) {
  Host* h = g_host.load();  // null in a forked child: nothing of the parent's to stop
  if (h == nullptr) Py_RETURN_NONE;
  Py_BEGIN_ALLOW_THREADS
  stop(*h, true);
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
}

PyObject* agent_role(PyObject*, PyObject*) {
  Host* h = g_host.load();
  const char* role = "none";
  if (h != nullptr) {
    std::lock_guard lock(h->mu);
    if (h->agent) {
      role = "hosting";
    } else if (h->waiter) {
      role = "waiting";
    }
  }
  return PyUnicode_FromString(role);
}

}  // namespace trainwatch::python
