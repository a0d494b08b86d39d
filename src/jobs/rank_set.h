// Rank lists as people read them: {0,1,2,3,4,6,7} -> "0-4,6-7".
#pragma once

#include <string>
#include <vector>

namespace trainwatch::jobs {

// Sorts and deduplicates; consecutive runs of two or more become "a-b". Empty -> "".
std::string format_rank_set(std::vector<int> ranks);

// "rank 3" or "ranks 0-4,6-7".
std::string ranks_phrase(const std::vector<int>& ranks);

}  // namespace trainwatch::jobs
