// A job paused on purpose at a barrier: some ranks wait in dist.barrier() while the others,
// outside any collective, do the work they wait for (rank 0 evaluating, logging or writing
// what only it writes, undeclared). The most common pattern of training scripts: neither a
// suspect (rank_suspected) nor a stalled throughput while it lasts; the step timeout still
// pages a pause that never ends (stall_findings.h).
//
// Where each rank is, best first: the place its Python stack shows (rank_place.h), else its
// collective marks (CollectiveReport: the Python module wraps torch.distributed's calls),
// which every report carries, where the agent asks for a stack only once a step is overdue
// and a long pause before it makes that later still. A rank whose whereabouts are unknown,
// or that waits in another collective, rules the pause out, and so does a rank outside the
// collectives that has entered as many as the ranks in the barrier: it has passed it. Pure.
#pragma once

#include <utility>
#include <vector>

#include "jobs/report.h"

namespace trainwatch::jobs {

// Whether the ranks (rank, its last report) show the job paused at a barrier: at least one
// in a barrier, at least one outside any collective, and none anywhere else.
bool paused_at_barrier(const std::vector<std::pair<int, const RankReport*>>& ranks);

// Whether one rank's reports, `before` and the next `now`, show it waiting in one barrier a
// whole report apart without a step between: the job makes no steps then, whatever the
// others do (JobState leaves such windows out of its pace). By the marks alone, which every
// report carries.
bool waits_in_barrier(const RankReport& before, const RankReport& now);

}  // namespace trainwatch::jobs
