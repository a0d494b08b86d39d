// Finds the heartbeat monitor a ping token belongs to, without leaking the token through
// timing: entries are placed by a hash of the token, and every candidate of that hash is
// compared in full with a constant-time compare, so how long a lookup takes depends on the
// hash of what was sent, never on how many leading characters of a real token match.
// The table is one array probed in order (a ping looks up a token among 10,000 at tens of
// thousands a second; a node-per-entry hash map cost it a cache miss per pointer).
//
// Immutable after construction (its rate limiters excepted, which lock themselves), so a
// shared_ptr to it can be read from any thread while a reload builds the next one.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "heartbeat/rate_limiter.h"

namespace trainwatch::heartbeat {

struct TokenEntry {
  TokenEntry(std::string m, std::string t, size_t limit, MonoTime now)
      : monitor(std::move(m)), token(std::move(t)), body_limit(limit), limiter(now) {}
  std::string monitor;
  std::string token;
  size_t body_limit;
  RateLimiter limiter;
};

class TokenIndex {
 public:
  // Every heartbeat monitor of `config` whose token is set (see catalog/heartbeat_tokens.h).
  TokenIndex(const Config& config, MonoTime now);

  // The entry whose token equals `token`, or nullptr.
  TokenEntry* find(std::string_view token) const;
  size_t size() const { return entries_.size(); }

 private:
  struct Slot {
    size_t hash = 0;
    TokenEntry* entry = nullptr;  // null: free, which ends a probe
  };
  std::vector<std::unique_ptr<TokenEntry>> entries_;
  std::vector<Slot> slots_;  // open addressing: a power of two, at most half full
};

}  // namespace trainwatch::heartbeat
