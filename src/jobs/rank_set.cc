#include "jobs/rank_set.h"

#include <algorithm>

namespace trainwatch::jobs {

std::string format_rank_set(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    if (out.size() >= kMaxRankSetChars) {
      out += ",... and " + std::to_string(ranks.size() - i) + " more ranks";
      break;
    }
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(ranks[i]);
    if (j > i) out += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return out;
}

std::string ranks_phrase(const std::vector<int>& ranks) {
  std::string set = format_rank_set(ranks);
  bool one = set.find_first_of(",-") == std::string::npos;
  return (one ? "rank " : "ranks ") + set;
}

}  // namespace trainwatch::jobs
