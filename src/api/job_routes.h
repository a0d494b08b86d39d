// The job endpoints: agents POST node reports; people and dashboards GET jobs,
// one job, and its series; /metrics gets per-job and per-rank families.
//   POST /api/v1/jobs/{job}/report   jobs::ReportIntake: bearer token; 413 > kMaxReportBytes, 401, 429 out
//                                    of token attempts (auth/credential_gate.h), 400, 404, 429, 422
//                                    past a bound (job_registry.h); 200 once stored and
//                                    applied, 503 when the store did not take it (then not applied)
//   GET  /api/v1/jobs                every job with its monitor state and phase
//   GET  /api/v1/jobs/{job}          nodes, ranks, GPUs, timeouts, findings
//   GET  /api/v1/jobs/{job}/series?metric=step_time|loss|tokens_per_s|gpu_mem
#pragma once

#include <functional>
#include <string>

#include "core/prometheus.h"
#include "engine/engine.h"
#include "http/server.h"
#include "jobs/job_registry.h"
#include "jobs/report_intake.h"

namespace trainwatch::api {

struct JobApiContext {
  engine::Engine& engine;
  jobs::JobRegistry& jobs;
  jobs::ReportIntake& intake;       // node reports: checked, stored, then applied
  jobs::JobPeers* peers = nullptr;  // replicas: the job reads of jobs held elsewhere go there
};

void add_job_routes(http::Router& router, const JobApiContext& context);

// Prometheus families for every job: ranks by health, findings, timeouts, refusals; rank
// step, lag and liveness per rank for jobs of at most jobs::kMaxDetailedRanks ranks.
// Bound: per-rank samples for at most kMaxMetricRanks ranks over all jobs (about 1 MB of
// text); jobs past it are left out of the per-rank families, in name order.
inline constexpr size_t kMaxMetricRanks = 4096;
// `shown_here`: on replicas, the jobs this one owns, so that each job is scraped from one
// replica only (its holders alone know it now); unset: every job.
std::string render_job_metrics(const jobs::JobRegistry& jobs,
                               const std::function<bool(const std::string&)>& shown_here = {});

// This process's share of the node reports: those it applied, and those it handed to the
// replicas that hold their job (jobs/report_intake.h).
void write_intake_metrics(const jobs::ReportIntake& intake, PrometheusWriter& w);

}  // namespace trainwatch::api
