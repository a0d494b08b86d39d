// Rank and node reports as an agent sends them, for the job tests on a manual clock.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "jobs/report.h"

namespace trainwatch::testing {

using jobs::NodeReport;
using jobs::RankReport;
using jobs::RankStatus;

// A live rank training at `step` (pid 100 + rank) that reported every step so far, or
// `reports` times when given.
inline RankReport training(int rank, int64_t step, uint64_t reports = 0) {
  RankReport r;
  r.rank = rank;
  r.pid = 100 + rank;
  r.alive = true;
  r.state = 'S';
  r.status = RankStatus::kTraining;
  r.step = step;
  r.step_reports = reports ? reports : static_cast<uint64_t>(step + 1);
  r.last_step_age_ms = 0;
  return r;
}

// `r` gone just now, the kernel saying how (agent/exit_watch.h): an exit code, or a signal.
inline RankReport exited(RankReport r, int code, int signal = 0) {
  r.alive = false;
  r.state = '?';
  r.gone_age_ms = 0;
  r.exit = ProcessExit{signal ? -1 : code, signal, false, false};
  return r;
}

// One report of `node` carrying `ranks`; `final` when its agent is stopping.
inline NodeReport node_report(std::string node, std::vector<RankReport> ranks, Millis every,
                              bool final = false) {
  NodeReport r;
  r.node = std::move(node);
  r.report_every = every;
  r.final = final;
  r.ranks = std::move(ranks);
  return r;
}

}  // namespace trainwatch::testing
