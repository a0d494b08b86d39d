// Ownership: which monitors this process checks and decides. A lone server owns them all
// (no Ownership given to the Engine); replicas on one PostgreSQL share them out
// (cluster/replica_set.h), and each monitor is checked, and its state changed, by its
// owner alone. The others follow its stored state for their readers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace trainwatch::engine {

class Ownership {
 public:
  virtual ~Ownership() = default;
  // Any thread; cheap enough to ask for every monitor at each change of owners, and
  // before every check: it is false for all once this process's lease lapsed.
  virtual bool owns(std::string_view monitor) const = 0;
  // The id this process claims the monitors it takes over with (Store::claim_monitors).
  virtual const std::string& member_id() const = 0;
  // Grows each time this process re-joins after its lease lapsed: whatever it owned
  // before is let go and claimed again under new epochs, from the stored state.
  virtual uint64_t term() const = 0;
};

}  // namespace trainwatch::engine
