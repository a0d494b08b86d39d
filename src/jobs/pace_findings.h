// The pace rules of the analysis (analysis.h): a rank slower at its steps than its peers
// (straggler), and the job's throughput against its own recent past (throughput_drop).
// Warnings, never pages.
#pragma once

#include <vector>

#include "jobs/analysis_context.h"

namespace trainwatch::jobs::rules {

void straggler_findings(const Context& c, std::vector<Finding>& out);
void throughput_findings(const Context& c, std::vector<Finding>& out);

}  // namespace trainwatch::jobs::rules
