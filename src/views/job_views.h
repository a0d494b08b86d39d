// JSON views of a job snapshot, shared by the job API and the dashboard's job page (which
// renders the same object server-side and then refreshes it from the API).
//   summary: name, monitor status and incident, phase, step, counts of ranks and findings
//   detail:  the summary plus timeouts, findings, every rank (with its grid `health`) and node;
//            for a job of more than jobs::kMaxDetailedRanks ranks, `ranks` is empty and
//            `ranks_omitted` true: `rank_ranges` (consecutive ranks by health, at most
//            jobs::kMaxRankRanges) and `rank_health` (counts) summarise every job's ranks
#pragma once

#include <cstdint>

#include <boost/json.hpp>

#include "engine/engine.h"
#include "jobs/job_registry.h"

namespace trainwatch::views {

boost::json::object job_summary_json(const engine::Engine& engine, const jobs::JobSnapshot& snapshot);
boost::json::object job_detail_json(const engine::Engine& engine, const jobs::JobSnapshot& snapshot);

// Milliseconds from `t` to the snapshot's instant, on the server's monotonic clock.
int64_t snapshot_age_ms(const jobs::JobSnapshot& snapshot, MonoTime t);

}  // namespace trainwatch::views
