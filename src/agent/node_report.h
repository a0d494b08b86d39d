// The node report an agent pushes to the server (schema version 1, docs/api.md "Node
// reports"): every local rank's slot with its process facts, and the node's probes.
// Pure: a snapshot and what the pusher tracked between reports in, JSON text out.
// Times go out as ages relative to the snapshot (the server adds them to its own receive
// time, so the node's clock never decides liveness).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "agent/node_snapshot.h"
#include "core/clock.h"

namespace trainwatch::agent {

inline constexpr int kNodeReportSchema = 1;

// What the pusher learned about one rank (keyed by slot owner) since its last report.
struct RankTrack {
  int64_t max_step_gap_ms = 0;           // longest time between two steps seen in the window
  std::optional<int64_t> gone_since_ms;  // wall ms when the process was first seen gone
};

struct ReportMeta {
  std::string node;
  uint64_t seq = 0;
  bool final = false;
  Millis report_every{5'000};
  int64_t agent_pid = 0;
};

std::string render_node_report(const NodeSnapshot& node, const std::map<uint64_t, RankTrack>& tracks,
                               const ReportMeta& meta);

}  // namespace trainwatch::agent
