// How much a YAML document's aliases repeat. yaml-cpp shares an anchored node between its
// aliases, so parsing a file is cheap however often `*name` appears; but every reader of
// the config copies what it reads, so 30,000 aliases of a 3 KB string in a 100 KB file
// cost 190 MB once read. The loader measures the document as its readers will see it,
// every alias expanded, before reading anything, and refuses one whose aliases add more
// than kMaxAliasExpansion (the nested "billion laughs" form included: the measure costs
// one visit per distinct node, however deep the nesting).
#pragma once

#include <cstdint>
#include <optional>

#include <yaml-cpp/yaml.h>

namespace trainwatch::config_detail {

// What aliases may add to a document, in bytes of scalars (each node counts one more).
// Far above what shared notify lists or conditions add to a real config, far below what
// would hurt the server (its readers copy about twice what they read).
inline constexpr uint64_t kMaxAliasExpansion = 4ULL << 20;

struct AliasExcess {
  YAML::Mark anchored;    // the anchored value whose repetition adds the most
  uint64_t repeats = 0;   // how many times it is read in all
  uint64_t expanded = 0;  // the whole document's size, every alias expanded
  uint64_t distinct = 0;  // its size with every node counted once
};

// nullopt when the aliases of `root` add at most `bound`; else the biggest offender.
std::optional<AliasExcess> alias_excess(const YAML::Node& root, uint64_t bound = kMaxAliasExpansion);

}  // namespace trainwatch::config_detail
