// The stall rules of the analysis (analysis.h): every rank stopped at one step, or one rank
// behind the others, judged against the step timeout; before it pages, the early warning
// that names the rank the others wait for (docs/failure-modes.md, "A rank stuck outside
// the collective").
#pragma once

#include <vector>

#include "jobs/analysis_context.h"

namespace trainwatch::jobs::rules {

// No rank advanced within the step timeout, or one rank lags while others advance; a
// start-up that made too few steps within the start-up timeout.
void stall_findings(const Context& c, bool starting, Millis step_timeout, bool learned,
                    std::vector<Finding>& out);

}  // namespace trainwatch::jobs::rules
