// A job's culprit as alert labels, the one vocabulary of the `alertmanager` channel and the
// shipped Prometheus rules (deploy/prometheus/trainwatch.rules.yml): `reason` (the finding's
// code: rank_gone, job_stalled, ...), `rank` (the ranks it names, "5" or "2,5"; none for a
// finding that names more than a few, such as a stall of every rank) and `node`.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "jobs/analysis.h"

namespace trainwatch::jobs {

// At most this many ranks go in `rank`; a finding naming more names none there.
inline constexpr size_t kMaxLabelledRanks = 4;

std::vector<std::pair<std::string, std::string>> culprit_labels(const Finding& culprit);

}  // namespace trainwatch::jobs
