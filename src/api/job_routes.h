// The job endpoints: agents POST node reports; people and dashboards GET jobs,
// one job, and its series; /metrics gets per-job and per-rank families.
//   POST /api/v1/jobs/{job}/report   jobs::ReportIntake: bearer token; 413 > kMaxReportBytes, 401, 400,
//                                    404, 429, 422 past a bound (job_registry.h); 200 once stored and
//                                    applied, 503 when the store did not take it (then not applied)
//   GET  /api/v1/jobs                every job with its monitor state and phase
//   GET  /api/v1/jobs/{job}          nodes, ranks, GPUs, timeouts, findings
//   GET  /api/v1/jobs/{job}/series?metric=step_time|loss|tokens_per_s|gpu_mem
#pragma once

#include <string>

#include "engine/engine.h"
#include "http/server.h"
#include "jobs/job_registry.h"
#include "jobs/report_intake.h"

namespace trainwatch::api {

struct JobApiContext {
  engine::Engine& engine;
  jobs::JobRegistry& jobs;
  jobs::ReportIntake& intake;  // node reports: checked, stored, then applied
};

void add_job_routes(http::Router& router, const JobApiContext& context);

// Prometheus families for every job: ranks by health, findings, timeouts, refusals; rank
// step, lag and liveness per rank for jobs of at most jobs::kMaxDetailedRanks ranks.
// Bound: per-rank samples for at most kMaxMetricRanks ranks over all jobs (about 1 MB of
// text); jobs past it are left out of the per-rank families, in name order.
inline constexpr size_t kMaxMetricRanks = 4096;
std::string render_job_metrics(const jobs::JobRegistry& jobs);

}  // namespace trainwatch::api
