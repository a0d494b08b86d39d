// A job memo: what a job's node reports cannot tell again after a restart, as JSON for
// the store (SaveJobMemo): when the job was first seen, its attempts, and its interruption
// ledger. The replica that checks the job stores it whenever an attempt begins or the
// ledger changes (JobRegistry::set_on_memo); a starting server applies it before the
// stored node reports (jobs/job_journal.h), so the job page lists every attempt and the
// ledger and goodput go on from where they were.
//
// Instants are stored as wall time and read back on this process's monotonic clock by the
// (now, wall) pair given: the clocks' offset is all that changes between processes.
//
// Pure.
#pragma once

#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/result.h"
#include "jobs/interruption.h"
#include "jobs/job_state.h"

namespace trainwatch::jobs {

inline constexpr int kJobMemoVersion = 1;

std::string encode_job_memo(const JobState& job, const InterruptionLedger& ledger, MonoTime now,
                            SystemTime wall);

// Applies a memo to a job that has had no report yet. An unreadable memo (another
// version's, a damaged row) is an error and changes nothing.
Status apply_job_memo(std::string_view memo, JobState& job, InterruptionLedger& ledger, MonoTime now,
                      SystemTime wall);

}  // namespace trainwatch::jobs
