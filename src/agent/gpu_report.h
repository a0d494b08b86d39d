// The GPUs', their ranks' and the fabric's part of the node report (docs/api.md, "Node
// reports"): what the server's GPU findings (jobs/gpu_findings.h) and the job page read.
// Times are ages at `now_ms`, as everywhere in the report. Pure.
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>

#include "agent/node_snapshot.h"

namespace trainwatch::agent {

boost::json::array gpus_report_json(const NodeSnapshot& node);
boost::json::array ib_ports_report_json(const NodeSnapshot& node);
// A rank's "gpu": {index, memory_used_bytes, source}; null when no GPU is known to be its.
boost::json::value rank_gpu_report_json(const RankView& r);

}  // namespace trainwatch::agent
