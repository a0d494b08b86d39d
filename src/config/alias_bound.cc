#include "config/alias_bound.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

namespace trainwatch::config_detail {
namespace {

constexpr uint64_t kSaturated = uint64_t{1} << 62;

uint64_t add(uint64_t a, uint64_t b) { return std::min(kSaturated, a + b); }

// One distinct node: an alias reads the same node again (yaml-cpp shares it), found here by
// where it stands in the text and what it is: no two distinct nodes of one kind start at
// the same place.
struct Visited {
  YAML::Node node;
  uint64_t size = 0;   // with everything under it expanded
  uint64_t reads = 0;  // times the document reads it: 1 + its aliases
};

class Measure {
 public:
  uint64_t distinct = 0;
  std::vector<Visited> visited;

  uint64_t size_of(const YAML::Node& node) {
    const YAML::Mark mark = node.Mark();
    const std::pair<int, int> key{mark.pos, static_cast<int>(node.Type())};
    if (mark.pos >= 0) {
      if (auto it = seen_.find(key); it != seen_.end() && visited[it->second].node.is(node)) {
        ++visited[it->second].reads;
        return visited[it->second].size;
      }
    }
    uint64_t own = 1;
    if (node.IsScalar()) own += node.Scalar().size();
    distinct = add(distinct, own);
    uint64_t size = own;
    if (node.IsSequence()) {
      for (const YAML::Node& item : node) size = add(size, size_of(item));
    } else if (node.IsMap()) {
      for (const auto& entry : node) size = add(add(size, size_of(entry.first)), size_of(entry.second));
    }
    if (mark.pos >= 0) {
      seen_[key] = visited.size();
      visited.push_back(Visited{node, size, 1});
    }
    return size;
  }

 private:
  std::map<std::pair<int, int>, size_t> seen_;
};

}  // namespace

std::optional<AliasExcess> alias_excess(const YAML::Node& root, uint64_t bound) {
  Measure measure;
  const uint64_t expanded = measure.size_of(root);
  if (expanded - std::min(expanded, measure.distinct) <= bound) return std::nullopt;
  // The worst offender: the anchored value whose repetitions add the most.
  const Visited* worst = nullptr;
  uint64_t worst_added = 0;
  for (const Visited& v : measure.visited) {
    const uint64_t added = v.reads > 1 ? std::min(kSaturated / v.reads, v.size) * (v.reads - 1) : 0;
    if (worst == nullptr || added > worst_added) {
      worst = &v;
      worst_added = added;
    }
  }
  return AliasExcess{worst->node.Mark(), worst->reads, expanded, measure.distinct};
}

}  // namespace trainwatch::config_detail
