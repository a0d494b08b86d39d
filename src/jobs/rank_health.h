// One word for a rank's condition, for the dashboard's rank grid and the API: what a
// person scanning hundreds of cells needs first. Derived from the job's verdict (its
// findings name ranks) and the rank's last report; pure.
//
// Order of precedence: a rank named by a DOWN finding (or one that failed or vanished)
// is `down`; one named by a warning (a straggler) is `warning`; one that finished is
// `finished`; one at least kBehindSteps behind the most advanced rank is `behind`;
// otherwise `ok`. Ranks of a synchronous job sit within a step of each other, so one
// step of lag is normal and not shown.
#pragma once

#include <string_view>

#include "jobs/analysis.h"
#include "jobs/job_state.h"

namespace trainwatch::jobs {

enum class RankHealth { kOk, kBehind, kWarning, kDown, kFinished };
std::string_view to_string(RankHealth h);

inline constexpr int64_t kBehindSteps = 2;

RankHealth rank_health(const JobVerdict& verdict, int rank, const RankRecord& record);

}  // namespace trainwatch::jobs
