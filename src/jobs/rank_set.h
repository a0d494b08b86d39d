// Rank lists as people read them: {0,1,2,3,4,6,7} -> "0-4,6-7".
#pragma once

#include <string>
#include <vector>

namespace trainwatch::jobs {

// Sorts and deduplicates; consecutive runs of two or more become "a-b". Empty -> "".
// Bounded: past kMaxRankSetChars the remaining runs are left out and counted, "0,2,4,...
// and 8190 more ranks", so an alert about a huge job stays one readable line.
inline constexpr size_t kMaxRankSetChars = 200;
std::string format_rank_set(std::vector<int> ranks);

// "rank 3" or "ranks 0-4,6-7".
std::string ranks_phrase(const std::vector<int>& ranks);

}  // namespace trainwatch::jobs
