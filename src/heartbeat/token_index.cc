#include "heartbeat/token_index.h"

#include <functional>

#include "core/constant_time.h"

namespace trainwatch::heartbeat {

TokenIndex::TokenIndex(const Config& config, MonoTime now) {
  for (const auto& m : config.monitors) {
    const auto* spec = std::get_if<HeartbeatSpec>(&m.spec);
    if (spec == nullptr || spec->token.empty()) continue;
    entries_.push_back(std::make_unique<TokenEntry>(m.name, spec->token, spec->ping_body_limit, now));
    by_hash_[std::hash<std::string_view>{}(spec->token)].push_back(entries_.back().get());
  }
}

TokenEntry* TokenIndex::find(std::string_view token) const {
  auto it = by_hash_.find(std::hash<std::string_view>{}(token));
  if (it == by_hash_.end()) return nullptr;
  TokenEntry* found = nullptr;
  for (TokenEntry* entry : it->second) {
    if (constant_time_equal(entry->token, token)) found = entry;
  }
  return found;
}

}  // namespace trainwatch::heartbeat
