#include "jobs/launch_record.h"

#include <array>
#include <csignal>
#include <utility>

#include "core/enum_names.h"

namespace trainwatch::jobs {
namespace {

constexpr EnumNames<LaunchOutcome, 6> kOutcomeNames{{
    {LaunchOutcome::kOpen, "open"},
    {LaunchOutcome::kFinished, "finished"},
    {LaunchOutcome::kFailed, "failed"},
    {LaunchOutcome::kPreempted, "preempted"},
    {LaunchOutcome::kRequeued, "requeued"},
    {LaunchOutcome::kSuperseded, "superseded"},
}};

// A rank that finished: said so, or exited 0 (a script that never called finish()).
bool rank_finished(const RankReport& r) {
  return r.status == RankStatus::kFinished ||
         (!r.alive && r.exit && r.exit->signal == 0 && r.exit->code == 0);
}

// A rank that ended by a failure of its own, not by its scheduler's SIGTERM.
bool failed_of_its_own(const RankReport& r) {
  if (r.status == RankStatus::kFailed || !r.error.empty()) return true;
  if (r.alive) return false;
  if (!r.exit) return true;  // vanished while its agent watched
  return r.exit->signal != SIGTERM && (r.exit->signal != 0 || r.exit->code != 0);
}

}  // namespace

std::string_view to_string(LaunchOutcome o) { return name_of(kOutcomeNames, o); }

std::optional<LaunchOutcome> launch_outcome_from_string(std::string_view s) {
  return value_of(kOutcomeNames, s);
}

LaunchOutcome ended_as(const std::vector<const RankReport*>& ranks, bool relaunched) {
  bool all_finished = !ranks.empty(), terminated = false;
  for (const RankReport* r : ranks) {
    if (rank_finished(*r)) continue;
    all_finished = false;
    if (failed_of_its_own(*r)) return LaunchOutcome::kFailed;
    terminated = terminated || (!r->alive && r->exit && r->exit->signal == SIGTERM);
  }
  if (all_finished) return LaunchOutcome::kFinished;
  if (terminated) return LaunchOutcome::kPreempted;
  return relaunched ? LaunchOutcome::kRequeued : LaunchOutcome::kSuperseded;
}

bool ended_launch_as(const RankReport& r, LaunchOutcome outcome) {
  if (rank_finished(r)) return false;
  if (outcome == LaunchOutcome::kFailed) return failed_of_its_own(r);
  if (outcome == LaunchOutcome::kPreempted) return !r.alive && r.exit && r.exit->signal == SIGTERM;
  return false;
}

}  // namespace trainwatch::jobs
