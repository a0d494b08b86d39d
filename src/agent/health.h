// Turns a NodeSnapshot into GET /health (JSON, 200/503) and GET /metrics (Prometheus text).
// Pure: same snapshot and thresholds, same output.
//
// The JSON keeps every field of the seed tutorials' /health ({status: ok|degraded, training:
// {...}, stalled}, plus ColossalAI's pipeline_stage, gemini_oom_events, world_size,
// kernels_compiled inside training) and adds ranks[], gpus[], disks[], memory, rendezvous,
// and reasons[] / warnings[] ({code, message}). Healthy iff reasons[] is empty.
#pragma once

#include <string>
#include <vector>

#include "agent/node_snapshot.h"
#include "agent/options.h"

namespace trainwatch::agent {

struct Reason {
  std::string code;     // stable: rank_gone, rank_failed, stalled, gpu_memory, ...
  std::string message;  // "rank 5 (pid 41231) is gone"
};

struct HealthReport {
  bool healthy = false;
  std::vector<Reason> reasons;
  std::vector<Reason> warnings;
  // A training rank has made no step for longer than stall_after (the tutorials' `stalled`
  // key): decided where that reason is added, not by reading its code back.
  bool stalled = false;
};

HealthReport evaluate(const NodeSnapshot& node, const Thresholds& thresholds);

struct Rendered {
  int status = 503;
  std::string health_json;
  std::string metrics;
};

Rendered render(const NodeSnapshot& node, const Thresholds& thresholds);

}  // namespace trainwatch::agent
