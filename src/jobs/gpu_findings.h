// The findings a node's GPUs and fabric give, from its last report, each naming the node,
// the GPU (index and PCI bus id) and the ranks that use it (their agents' GPU -> rank
// mapping). Pure; called by analyse() (analysis.h) for every node that still reports.
//
// Down, and a fault of the node (Finding::node_fault: what a drain or a reboot answers):
// a GPU lost or with uncorrectable ECC errors, an XID NVIDIA answers with a GPU reset, a
// reboot or an inspection (core/gpu_xid.h), rows pending remapping or a failed remapping,
// a driver recovery action other than none, an NVLink or an InfiniBand/RoCE port down that
// its agent saw up. Down on the ranks but not the node's fault: an XID after which NVIDIA
// says to restart the application. Warnings: the application's own XIDs (on its ranks) and
// those NVIDIA says to ignore, pages pending retirement, a GPU at its slowdown temperature
// or slowed by hardware, memory near full, a port whose link_downed rose while it is up.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"
#include "jobs/analysis.h"
#include "jobs/job_state.h"

namespace trainwatch::jobs {

// Attribution orders (analysis.h) of the faults and the warnings.
struct GpuFindingOrders {
  int fault = 0;
  int warning = 0;
};

void gpu_findings(const JobState& job, const std::string& name, const NodeRecord& n, const JobThresholds& t,
                  GpuFindingOrders order, std::vector<Finding>& out);
void fabric_findings(const JobState& job, const std::string& name, const NodeRecord& n,
                     GpuFindingOrders order, std::vector<Finding>& out);

// Adds to each straggler finding what holds its rank's GPU's clocks down, when its agent
// reported that: "; its GPU 3 is slowed by HW thermal slowdown (84 °C)".
void explain_slow_gpus(const JobState& job, std::vector<Finding>& findings);

}  // namespace trainwatch::jobs
