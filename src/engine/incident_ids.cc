#include "engine/incident_ids.h"

#include <spdlog/spdlog.h>

namespace trainwatch::engine {

Status IncidentIds::load() {
  auto next_id = store_.next_incident_id();
  if (!next_id) return next_id.error();
  next_local_ = *next_id;
  return Ok{};
}

int64_t IncidentIds::next(bool shared) {
  if (!shared) return next_local_++;
  if (reserved_.first >= reserved_.second) {
    auto first = store_.reserve_incident_ids(kBlockSize);
    if (!first) {
      // The change it numbers cannot commit either while the store refuses; a local id
      // keeps the engine going, and the commit's compare-and-set keeps the monitor right.
      spdlog::warn("replicas: cannot reserve incident ids: {}", first.error().message);
      return next_local_++;
    }
    reserved_ = {*first, *first + kBlockSize};
  }
  return reserved_.first++;
}

}  // namespace trainwatch::engine
