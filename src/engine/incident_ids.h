// The ids of the incidents the engine opens. A lone server numbers them on from the
// store's next id, read once at start. Replicas sharing one store number theirs from
// blocks the store hands out to one replica each (Store::reserve_incident_ids), so two
// replicas never open two incidents under one id.
//
// Threading: none of its own; the engine calls load() in start(), before its io thread
// runs, and next() on that thread only.
#pragma once

#include <cstdint>
#include <utility>

#include "core/result.h"
#include "storage/store.h"

namespace trainwatch::engine {

class IncidentIds {
 public:
  explicit IncidentIds(Store& store) : store_(store) {}

  // Reads where the store's ids go on from.
  Status load();
  // The id of the next incident. `shared`: this process is one of several replicas on
  // the store (it asks the store for a block whenever its own is used up).
  int64_t next(bool shared);

 private:
  static constexpr int kBlockSize = 64;

  Store& store_;
  int64_t next_local_ = 1;
  // The block this replica may use, [first, second).
  std::pair<int64_t, int64_t> reserved_{0, 0};
};

}  // namespace trainwatch::engine
