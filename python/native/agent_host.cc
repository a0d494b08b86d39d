#include "python/native/agent_host.h"

#include <cstdio>
#include <memory>
#include <mutex>

#include "agent/agent.h"

namespace trainwatch::python {
namespace {

std::mutex g_mu;
SystemClock g_clock;
std::unique_ptr<agent::Agent> g_agent;

}  // namespace

PyObject* start_agent(PyObject*, PyObject* args, PyObject* kwargs) {
  static const char* kwlist[] = {
      "job",          "dir",           "host",           "port",         "checkpoint_dir",
      "nvme_path",    "stall_after_s", "gpu_memory_pct", "disk_free_gb", "host_memory_free_gb",
      "nvml_library", "server",        "token",          "node",         "report_every_s",
      nullptr};
  const char *job = nullptr, *dir = nullptr, *host = "127.0.0.1", *ckpt = nullptr, *nvme = nullptr,
             *nvml = nullptr, *server = nullptr, *token = nullptr, *node = nullptr;
  int port = 8765;
  double stall = 600, gpu_pct = 95, disk_gb = 10, mem_gb = 1, report_every = 5;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "ss|sizzddddzzzzd", const_cast<char**>(kwlist), &job, &dir,
                                   &host, &port, &ckpt, &nvme, &stall, &gpu_pct, &disk_gb, &mem_gb, &nvml,
                                   &server, &token, &node, &report_every)) {
    return nullptr;
  }
  agent::AgentOptions o;
  o.job = job;
  o.dir = dir;
  o.host = host;
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

  std::unique_ptr<agent::Agent> started;
  std::string error;
  Py_BEGIN_ALLOW_THREADS  // binding and the first sample touch no Python state
  {
    std::lock_guard lock(g_mu);
    if (g_agent) g_agent->stop();
    g_agent.reset();
    auto r = agent::Agent::start(o, g_clock, serve_http);
    if (r) {
      g_agent = std::move(*r);
    } else {
      error = r.error().message;
    }
  }
  Py_END_ALLOW_THREADS
  if (!error.empty()) {
    std::fprintf(stderr, "trainwatch: %s not started: %s; training continues without it\n",
                 serve_http ? "health server" : "agent", error.c_str());
    Py_RETURN_NONE;
  }
  std::lock_guard lock(g_mu);
  return PyLong_FromLong(g_agent->port());
}

PyObject* stop_agent(PyObject*, PyObject*) {
  Py_BEGIN_ALLOW_THREADS
  {
    std::lock_guard lock(g_mu);
    if (g_agent) g_agent->stop();
    g_agent.reset();
  }
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
}

}  // namespace trainwatch::python
