// The loss rules of the analysis (analysis.h): non-finite losses. One NaN or a short run of
// them is a finding, a warning on the job's page, for kNonfiniteNoticeFor after the run
// began; a run of kNonfiniteStreak steps in a row or more, still going on, pages, naming the
// rank whose run began first and its first bad step.
#pragma once

#include <vector>

#include "jobs/analysis_context.h"

namespace trainwatch::jobs::rules {

// Steps in a row whose loss was NaN or infinite, as the rank's last report shows them: 0
// when its loss is finite again. From the agent's count (nonfinite_run) or, for an agent that
// sends none, the steps since the run's first; an agent that counts nothing at all cannot
// tell one NaN from many, and every non-finite loss it shows counts as a streak, as before.
uint64_t nonfinite_run(const RankRecord& r);

// `running`: the ranks still running (rank_rule.h), in rank order.
void loss_findings(const Context& c, const std::vector<RankRef>& running, std::vector<Finding>& out);

}  // namespace trainwatch::jobs::rules
