// Ownership: which monitors this process checks and decides. A lone server owns them all
// (no Ownership given to the Engine); replicas on one PostgreSQL share them out
// (cluster/replica_set.h), and each monitor is checked, and its state changed, by its
// owner alone. The others follow its stored state for their readers.
#pragma once

#include <string_view>

namespace trainwatch::engine {

class Ownership {
 public:
  virtual ~Ownership() = default;
  // Any thread; cheap enough to ask for every monitor at each change of owners.
  virtual bool owns(std::string_view monitor) const = 0;
};

}  // namespace trainwatch::engine
