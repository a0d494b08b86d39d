// The node rules of the analysis (analysis.h): a node gone silent (or only its agent lost,
// when the other nodes' ranks go on stepping), a node whose agent left with its host
// process, GPU faults, disks and host memory, the rendezvous port, a rank claimed by two
// nodes.
#pragma once

#include <vector>

#include "jobs/analysis_context.h"

namespace trainwatch::jobs::rules {

void node_findings(const Context& c, std::vector<Finding>& out);

}  // namespace trainwatch::jobs::rules
