#include "engine/store_outages.h"

namespace trainwatch::engine {

std::optional<OutageSpan> StoreOutages::observe(bool out, MonoTime now, MonoTime since) {
  if (out) {
    const MonoTime from = since < now ? since : now;
    if (!began_ || from < *began_) began_ = from;
    return std::nullopt;
  }
  if (!began_) return std::nullopt;
  const OutageSpan span{*began_, now};
  began_.reset();
  ended_.push_back(span);
  if (ended_.size() > kKept) ended_.pop_front();
  return span;
}

}  // namespace trainwatch::engine
