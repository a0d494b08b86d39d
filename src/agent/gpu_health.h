// The GPUs' and the fabric's part of GET /health: the reasons (503) and warnings their
// state gives, and their JSON (gpus[], nvml, ib_ports[]). Pure, like health.h.
//
// Reasons: NVML hung, a GPU lost, an XID NVIDIA answers with a reset, a reboot or a restart
// of the application (core/gpu_xid.h), rows pending remapping or a failed remapping, a
// recovery action other than none, an NVLink or an InfiniBand port down that this agent
// saw up. Warnings: the application's own XIDs and those NVIDIA says to ignore, pages
// pending retirement, a GPU at its slowdown temperature or slowed by hardware, a port whose
// link_downed rose within the window while it is up again.
#pragma once

#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "agent/health.h"
#include "agent/node_snapshot.h"
#include "agent/options.h"

namespace trainwatch::agent {

void gpu_reasons(const NodeSnapshot& node, const Thresholds& t, HealthReport& h);
void fabric_reasons(const NodeSnapshot& node, HealthReport& h);

// gpus[], oom_risk (any GPU at the memory threshold) and the NVML probe's state.
void add_gpus(const NodeSnapshot& node, const Thresholds& t, boost::json::object& root);
// ib_ports[]: [] on a node without RDMA ports or before the first probe.
void add_fabric(const NodeSnapshot& node, boost::json::object& root);

// The local ranks using GPU `index` (gpu_ranks.h), in rank order.
std::vector<int> ranks_on_gpu(const NodeSnapshot& node, unsigned index);

// "GPU 5 (00000000:8A:00.0, rank 5)": the GPU, its bus id and who uses it.
std::string gpu_label(const NodeSnapshot& node, const GpuInfo& g);

}  // namespace trainwatch::agent
