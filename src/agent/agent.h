// The node agent: samples every local rank's slot and process, runs the node probes on
// worker threads with deadlines, and serves GET /health and GET /metrics from the last
// sample. Hosted by `trainwatch agent` or, in local rank 0, by trainwatch.init(health_port=).
//
// Threads (none touches Python):
//   sampler  - every sample_interval: slots + /proc, kicks due probes, renders, publishes
//   probes   - one ProbeWorker each (NVML, disks, memory, rendezvous); may hang, never waited on
//   http     - one io_context thread running the shared Beast server; handlers copy the
//              published render (a shared_ptr swap under a mutex) and never block
// Tests pass run_threads=false and a ManualClock, and call sample_once() themselves.
#pragma once

#include <memory>

#include "agent/health.h"
#include "agent/options.h"
#include "core/clock.h"
#include "core/result.h"

namespace trainwatch::agent {

class Agent {
 public:
  // Binds the HTTP port (when serve_http) and starts the threads (when run_threads).
  // Fails with one sentence when the port is in use or the address is bad.
  static Result<std::unique_ptr<Agent>> start(AgentOptions options, const Clock& clock,
                                              bool serve_http = true, bool run_threads = true);
  virtual ~Agent() = default;

  virtual uint16_t port() const = 0;
  // Takes one sample now and publishes it.
  virtual void sample_once() = 0;
  virtual std::shared_ptr<const Rendered> current() const = 0;
  // Waits (real time, bounded) until no probe is in flight; false on timeout. For tests.
  virtual bool wait_probes_idle(Millis limit) = 0;
  virtual void stop() = 0;
};

}  // namespace trainwatch::agent
