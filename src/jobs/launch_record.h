// Runs and attempts: the launches a job is made of, and how each ended.
//
// A job is a sequence of runs (a submission: one `srun`, one `torchrun`, one pod set),
// each a sequence of attempts (the launcher's restarts within it). JobState (job_state.h)
// opens them from the node reports and closes each when the next begins, with the outcome
// its ranks' last reports show (ended_as, below). Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "jobs/report.h"

namespace trainwatch::jobs {

// How a run or an attempt ended. kOpen while it is the job's current one.
enum class LaunchOutcome {
  kOpen,
  kFinished,    // every rank finished
  kFailed,      // a rank failed, exited non-zero, was killed or vanished (the ledger says why)
  kPreempted,   // its ranks ended by SIGTERM, the scheduler's signal, and nothing failed of its own
  kRequeued,    // relaunched by its launcher or scheduler (same run, or a higher restart count)
                // while none of its ranks had failed: the allocation was taken, then given back
  kSuperseded,  // another run began while its ranks still ran, as far as their last reports tell
};
std::string_view to_string(LaunchOutcome o);
std::optional<LaunchOutcome> launch_outcome_from_string(std::string_view s);

// The rank whose end gave an attempt that stopped short its outcome (failed, preempted), as
// its last report showed when the next launch replaced it. Kept with the attempt because its
// ranks are then gone: a failure replaced within the analysis's second was never in a
// verdict, and the interruption ledger (interruption.h) names it from this instead.
struct RankEnding {
  int rank = -1;
  MonoTime at{};                    // when it was first seen gone or failing
  std::optional<ProcessExit> exit;  // how its process ended, when its agent saw it
  std::string error;                // the error it recorded, if any
};

// One launch of the job's ranks within a run. A restart by the launcher (a higher restart
// count: torchrun's TORCHELASTIC_RESTART_COUNT, Slurm's SLURM_RESTART_COUNT) or a change of
// world size starts the next: its ranks replace the previous attempt's, and its start-up is
// timed from its own first report.
struct AttemptRecord {
  int number = 1;            // 1 for the job's first attempt seen here, then 2, 3... across runs
  int run = 1;               // the RunRecord::number it belongs to
  int launcher_attempt = 0;  // the launcher's restart count (0 when it said nothing)
  std::string run_id;
  int world_size = 0;
  MonoTime started{};  // its first report
  SystemTime started_wall{};
  std::optional<MonoTime> first_step_at;  // training again
  int64_t first_step = -1;                // the first step it made (after a resumed checkpoint)
  std::optional<MonoTime> warm_at;        // a rank past the warm-up steps: start-up is over
  int64_t max_step = -1;
  LaunchOutcome outcome = LaunchOutcome::kOpen;
  std::optional<SystemTime> ended_wall;  // when the next attempt began
  std::optional<MonoTime> ended_at;      // the same, on the server's monotonic clock
  std::optional<RankEnding> ending;      // kFailed, kPreempted: its rank that ended first
};

// One submission of the job: the launcher's run id (torchrun's --rdzv-id, Slurm's job id,
// TRAINWATCH_RUN_ID), or, without one, the ranks launched after every rank of the previous
// run ended or with a lower restart count than it had.
struct RunRecord {
  int number = 1;      // 1 for the job's first run seen here, then 2, 3...
  std::string run_id;  // "" when the launcher named none
  SystemTime started_wall{};
  LaunchOutcome outcome = LaunchOutcome::kOpen;  // its last attempt's
  std::optional<SystemTime> ended_wall;
};

// How the current launch ended, from its ranks' last reports, as the next begins:
//   every rank finished                                          -> kFinished
//   a rank failed of its own (an error, a non-zero exit, a signal
//     other than SIGTERM, gone without a word from the kernel)   -> kFailed
//   ranks ended by SIGTERM, none of the above                    -> kPreempted
//   ranks still running at their last report, and `relaunched`   -> kRequeued
//   still running, and another run began                         -> kSuperseded
// A rank that vanished while its agent watched is a failure (a SIGKILL as a user): a
// scheduler that takes the nodes back takes the agents with them, whose last reports then
// show the ranks running.
// `relaunched`: the next launch is the same run's restart (a higher restart count), or a
// new run under the same run id (a scheduler's requeue that reset the launcher's count).
LaunchOutcome ended_as(const std::vector<const RankReport*>& ranks, bool relaunched);

// Whether r is one of the ranks that gave its launch `outcome`: for kFailed, a rank that
// failed of its own; for kPreempted, one ended by SIGTERM; for any other outcome, none.
bool ended_launch_as(const RankReport& r, LaunchOutcome outcome);

}  // namespace trainwatch::jobs
