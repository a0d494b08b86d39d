#include "heartbeat/token_index.h"

#include <bit>
#include <functional>

#include "core/constant_time.h"

namespace trainwatch::heartbeat {

TokenIndex::TokenIndex(const Config& config, MonoTime now) {
  for (const auto& m : config.monitors) {
    const auto* spec = std::get_if<HeartbeatSpec>(&m.spec);
    if (spec == nullptr || spec->token.empty()) continue;
    entries_.push_back(std::make_unique<TokenEntry>(m.name, spec->token, spec->ping_body_limit, now));
  }
  if (entries_.empty()) return;
  slots_.resize(std::bit_ceil(2 * entries_.size()));
  const size_t mask = slots_.size() - 1;
  for (const auto& entry : entries_) {
    const size_t hash = std::hash<std::string_view>{}(entry->token);
    size_t i = hash & mask;
    while (slots_[i].entry != nullptr) i = (i + 1) & mask;
    slots_[i] = {hash, entry.get()};
  }
}

TokenEntry* TokenIndex::find(std::string_view token) const {
  if (slots_.empty()) return nullptr;
  const size_t hash = std::hash<std::string_view>{}(token);
  const size_t mask = slots_.size() - 1;
  TokenEntry* found = nullptr;
  for (size_t i = hash & mask; slots_[i].entry != nullptr; i = (i + 1) & mask) {
    if (slots_[i].hash == hash && constant_time_equal(slots_[i].entry->token, token)) found = slots_[i].entry;
  }
  return found;
}

}  // namespace trainwatch::heartbeat
