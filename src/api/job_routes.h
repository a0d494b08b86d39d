// The job endpoints: agents POST node reports; people and dashboards GET jobs,
// one job, and its series; /metrics gets per-job and per-rank families.
//   POST /api/v1/jobs/{job}/report   bearer token; 413 > kMaxReportBytes, 401, 400, 404, 429, 422 past
//                                    a rank bound (job_registry.h); 200 once stored, 503 when the
//                                    store did not take it (then it is analysed here only)
//   GET  /api/v1/jobs                every job with its monitor state and phase
//   GET  /api/v1/jobs/{job}          nodes, ranks, GPUs, timeouts, findings
//   GET  /api/v1/jobs/{job}/series?metric=step_time|loss|tokens_per_s|gpu_mem
#pragma once

#include <memory>
#include <string>

#include "auth/reloadable_secret.h"

#include "engine/engine.h"
#include "http/server.h"
#include "jobs/job_journal.h"
#include "jobs/job_registry.h"

namespace trainwatch::api {

struct JobApiContext {
  engine::Engine& engine;
  jobs::JobRegistry& jobs;
  jobs::JobJournal& journal;  // where an applied report is kept before the agent hears 200
  // The token agents send (empty: reports need no token); replaced on SIGHUP.
  std::shared_ptr<const auth::ReloadableSecret> token;
};

void add_job_routes(http::Router& router, const JobApiContext& context);

// Prometheus families for every job: ranks by health, findings, timeouts, refusals; rank
// step, lag and liveness per rank for jobs of at most jobs::kMaxDetailedRanks ranks.
// Bound: per-rank samples for at most kMaxMetricRanks ranks over all jobs (about 1 MB of
// text); jobs past it are left out of the per-rank families, in name order.
inline constexpr size_t kMaxMetricRanks = 4096;
std::string render_job_metrics(const jobs::JobRegistry& jobs);

}  // namespace trainwatch::api
