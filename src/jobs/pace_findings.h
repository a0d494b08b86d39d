// The pace rules of the analysis (analysis.h): a rank slower at its steps than its peers
// (straggler), and the job's throughput against its own recent past (throughput_drop).
// Warnings, never pages.
#pragma once

#include <deque>
#include <optional>
#include <vector>

#include "jobs/analysis_context.h"

namespace trainwatch::jobs::rules {

void straggler_findings(const Context& c, std::vector<Finding>& out);

// What the stall rules know of the job now (stall_findings.h): how long since any running
// rank stepped (nullopt: none has), and whether something already explains the stall: the
// ranks wait on purpose, or a warning names the rank they wait for.
struct StallSense {
  std::optional<Millis> stalled_for;
  bool explained = false;
};

// The job's throughput history, as JobState keeps it.
struct ThroughputHistory {
  const std::deque<ThroughputSample>& all;
  const std::deque<ThroughputSample>& training;
};

// Throughput below throughput_drop x the job's recent median: the job steps slower (and no
// rank is a straggler: then straggler_findings names it and this is not called), or it
// stalls and nothing explains why by the soft-hang time.
void throughput_findings(const Context& c, const StallSense& stall, std::vector<Finding>& out);

}  // namespace trainwatch::jobs::rules
