// The stacks of a hang, kept with its interruption (interruption.h): once the job's
// verdict is down, the Python stacks the agents captured for its overdue ranks are grouped
// by where each rank was (rank_place.h) and kept, so that after the job recovered or was
// restarted, and the live stacks are gone, one can still read where it stood.
//
// Bounded, whatever the job's size: at most kMaxKeptGroups places (the culprit's first,
// then the most shared), each with its ranks (the first kMaxKeptRanks listed, all
// counted) and the innermost kMaxKeptFrames frames of its lowest rank's main thread, with
// that thread's native frames when the agent took them (core/native_stack.h). Pure.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <boost/json/fwd.hpp>

#include "core/native_stack.h"
#include "core/python_stack.h"
#include "jobs/analysis.h"
#include "jobs/job_state.h"

namespace trainwatch::jobs {

inline constexpr size_t kMaxKeptGroups = 8;
inline constexpr size_t kMaxKeptRanks = 64;
inline constexpr size_t kMaxKeptFrames = 16;

struct KeptStackGroup {
  std::string place;                // "in fetch_next_shard (data.py:31)"
  bool culprit = false;             // the place the others waited for (rank_place.h's culprit)
  std::vector<int> ranks;           // ascending, the first kMaxKeptRanks
  size_t rank_count = 0;            // every rank that was there
  int sample_rank = -1;             // whose frames these are
  std::vector<PyFrame> frames;      // innermost first
  std::vector<NativeFrame> native;  // the same thread's, innermost first; empty when none came
};

// The groups of the ranks whose last report carries a stack captured since the job's last
// step (one moment: older captures show where a rank was before); empty when none does.
// The culprit is the failure's own: for a hang (rank_stuck, job_stalled, rank_hung,
// collective_mismatch) the place the others wait for (rank_place.h), for any other finding
// the place of the rank it names, if that rank's stack came (a SIGKILLed rank leaves none:
// then no group is the culprit, and the stacks show where the others were).
std::vector<KeptStackGroup> keep_stacks(const JobState& job, const Finding& head);

// One form for the API and the job's stored memo (job_memo.h):
//   [{"place", "culprit", "ranks", "rank_count", "rank", "frames": [{"function", "file", "line"}],
//     "native": [{"function", "module"}]}]
// Reading skips what is damaged and applies the bounds again (a memo is stored input).
boost::json::array kept_stacks_json(const std::vector<KeptStackGroup>& groups);
std::vector<KeptStackGroup> kept_stacks_from_json(const boost::json::value& value);

}  // namespace trainwatch::jobs
