// The stall rules of the analysis (analysis.h): every rank stopped at one step, or one rank
// behind the others, judged against the step timeout; before it pages, the early warning
// that names the rank the others wait for (docs/failure-modes.md, "A rank stuck outside
// the collective").
#pragma once

#include <vector>

#include "jobs/analysis_context.h"
#include "jobs/pace_findings.h"

namespace trainwatch::jobs::rules {

// No rank advanced within the step timeout, or one rank lags while others advance; a
// start-up that made too few steps within the start-up timeout.
void stall_findings(const Context& c, bool starting, Millis step_timeout, bool learned,
                    std::vector<Finding>& out);

// How long no running rank has stepped, and whether they wait on purpose: every rank but a
// minority waits in a barrier for those (rank 0 evaluating, logging), or a rank is in a
// phase the job declared (evaluation). Read only while the job makes no progress.
StallSense stall_sense(const Context& c);

}  // namespace trainwatch::jobs::rules
