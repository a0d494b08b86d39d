// GET /metrics of the agent: a NodeSnapshot as Prometheus text, through the same writer as
// the server's /metrics (core/prometheus.h). Pure: same snapshot, same text.
#pragma once

#include <string>

#include "agent/node_snapshot.h"

namespace trainwatch::agent {

// `healthy`: whether GET /health answers 200 for this snapshot (trainwatch_agent_healthy).
std::string node_metrics(const NodeSnapshot& node, bool healthy);

}  // namespace trainwatch::agent
