// What happened to a monitor, as events a person reads, instead of one row per check:
//   down        an incident opened ("Down: HTTP 503"), with its id for its updates
//   up          it closed ("Up again after 4 min")
//   failed      a run of failed checks that opened no incident (below `retries`):
//               "3 checks failed (no incident): HTTP 503"
// and, for runs of results (a job's verdicts), the same verdict in a row as one line:
//   verdict     "✓ healthy" / "✕ rank 3 stalled", from, to and how many checks.
// Pure: stored rows in, events out, newest first.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/model.h"

namespace trainwatch::web {

struct MonitorEvent {
  std::string kind;  // down, up, failed
  SystemTime at{};
  std::string text;  // as stored; the caller redacts causes for its audience (cause_for)
  std::optional<int64_t> incident_id;
  int64_t checks = 0;  // failed: how many
};

// At most `limit` events, newest first. `incidents` and `results` newest first, as the
// store reads them.
std::vector<MonitorEvent> monitor_events(std::span<const Incident> incidents,
                                         std::span<const CheckResult> results, SystemTime now, size_t limit);

struct VerdictRun {
  bool ok = false;
  std::string cause;  // "" when ok
  SystemTime from{}, to{};
  int64_t checks = 0;
};

// Consecutive results with the same verdict (ok and cause) as one run, newest first; at
// most `limit` runs.
std::vector<VerdictRun> verdict_runs(std::span<const CheckResult> results, size_t limit);

}  // namespace trainwatch::web
