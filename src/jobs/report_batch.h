// Report batches: how one replica hands many node reports to another in one request
// (jobs/job_peers.h). A report handed on one request at a time cost each hop a whole HTTP
// exchange on both sides, about as much as taking the report from the agent; at 3,277
// reports a second on three replicas that was most of the installation's CPU
// (bench/RESULTS.md, "a 131,072-rank job on three replicas"). Reports waiting for the same
// replica go together instead, in the order they came.
//
//   request  POST kBatchPath, the agents' Authorization, kHopHeader: "batch"; the body is
//            one entry per report: "<job> <hop> <bytes>\n" then the report's bytes.
//   answer   200, one entry per report, in order: "<status> <bytes>\n" then the answer's
//            bytes (the JSON of a 200, a problem's detail otherwise).
//
// Lengths, not separators: a report is any bytes the agent sent. Pure: no I/O.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace trainwatch::jobs {

inline constexpr std::string_view kBatchPath = "/api/v1/replicas/job-reports";
// Reports in one batch, and its bytes (more go in the next): a batch is answered whole, so
// a bound on it is a bound on how long the reports in it wait for one another's answers,
// and it must pass the HTTP server's body bound (1 MiB, http/server.h) with its heads. A
// report larger than that (up to kMaxReportBytes) goes alone.
inline constexpr size_t kMaxBatchReports = 256;
inline constexpr size_t kMaxBatchBytes = 768 * 1024;

struct BatchedReport {
  std::string job;
  std::string hop;  // kHopForwarded or kHopRelayed
  std::string body;
};

struct BatchedAnswer {
  int status = 0;
  std::string text;  // the JSON of a 200, a problem's detail otherwise
};

void append_report(std::string& batch, const BatchedReport& report);
Result<std::vector<BatchedReport>> parse_report_batch(std::string_view batch);

void append_answer(std::string& answers, const BatchedAnswer& answer);
Result<std::vector<BatchedAnswer>> parse_answer_batch(std::string_view answers);

}  // namespace trainwatch::jobs
