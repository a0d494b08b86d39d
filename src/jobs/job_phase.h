// JobPhase: where a whole job is, as its verdict says (analysis.h, JobVerdict::phase): one
// word per phase, typed so that the ledger and the registry compare phases, not spellings.
// Its text is what the API and the pages show (`phase` in /api/v1/jobs).
#pragma once

#include <string_view>

namespace trainwatch::jobs {

enum class JobPhase {
  kWaiting,   // no rank has reported yet
  kStarting,  // the slowest rank is still in its first steps
  kTraining,
  kCheckpointing,  // a rank writes a checkpoint
  kEvaluating,     // a rank is in a declared evaluation
  kFinished,       // every rank finished
  kFailed,         // a rank failed
};

constexpr std::string_view to_string(JobPhase phase) {
  switch (phase) {
    case JobPhase::kWaiting: return "waiting";
    case JobPhase::kStarting: return "starting";
    case JobPhase::kTraining: return "training";
    case JobPhase::kCheckpointing: return "checkpointing";
    case JobPhase::kEvaluating: return "evaluating";
    case JobPhase::kFinished: return "finished";
    case JobPhase::kFailed: return "failed";
  }
  return "unknown";
}

// Whether the job is at its work: its ranks step, or pause as training does.
constexpr bool at_work(JobPhase phase) {
  return phase == JobPhase::kStarting || phase == JobPhase::kTraining || phase == JobPhase::kCheckpointing ||
         phase == JobPhase::kEvaluating;
}

}  // namespace trainwatch::jobs
