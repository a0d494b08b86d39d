#include "jobs/culprit_labels.h"

namespace trainwatch::jobs {

std::vector<std::pair<std::string, std::string>> culprit_labels(const Finding& culprit) {
  std::vector<std::pair<std::string, std::string>> labels{{"reason", std::string(to_string(culprit.code))}};
  if (!culprit.ranks.empty() && culprit.ranks.size() <= kMaxLabelledRanks) {
    std::string ranks;
    for (int rank : culprit.ranks) ranks += (ranks.empty() ? "" : ",") + std::to_string(rank);
    labels.emplace_back("rank", ranks);
  }
  if (!culprit.node.empty()) labels.emplace_back("node", culprit.node);
  return labels;
}

}  // namespace trainwatch::jobs
