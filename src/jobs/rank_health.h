// One word for a rank's condition, for the dashboard's rank grid and the API: what a
// person scanning hundreds of cells needs first. Derived from the job's verdict (its
// findings name ranks) and the rank's last report; pure.
//
// Order of precedence: a rank named by a DOWN finding (or one that failed or vanished)
// is `down`; one named by a warning (a straggler) is `warning`; one that finished is
// `finished`; one at least kBehindSteps behind the most advanced rank is `behind`;
// otherwise `ok`. Ranks of a synchronous job sit within a step of each other, so one
// step of lag is normal and not shown.
//
// Lag comes from each node's last report, and nodes report at different instants: a node
// whose report is 2 s older than the newest shows its ranks 2 s of steps behind while they
// keep pace. So the steps the job makes in that age difference (at its smoothed step gap)
// are forgiven before a rank counts as behind.
#pragma once

#include <string_view>

#include "jobs/analysis.h"
#include "jobs/job_state.h"

namespace trainwatch::jobs {

enum class RankHealth { kOk, kBehind, kWarning, kDown, kFinished };
std::string_view to_string(RankHealth h);

inline constexpr int64_t kBehindSteps = 2;

// `newest_seen`: when the most recently reported rank of the job was seen.
RankHealth rank_health(const JobVerdict& verdict, int rank, const RankRecord& record, MonoTime newest_seen);

}  // namespace trainwatch::jobs
