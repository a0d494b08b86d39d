// GuessThrottle: limits how many credentials each source may have checked, so that online
// guessing is slow, while a correct credential is never refused because of what OTHER
// sources or other credentials did.
//
// Threat model.
// - What is guessed: admin tokens (auth.admin_tokens, TRAINWATCH_ADMIN_TOKEN), presented
//   as `Authorization: Bearer` or at /login; soon per-user passwords, checked with
//   libsodium's crypto_pwhash. The config refuses admin tokens under 16 characters but
//   cannot measure their entropy; the docs tell operators to generate them
//   (`openssl rand -hex 32`). A random token is beyond online guessing at any rate; this
//   throttle is for the token or password a person chose, and for the cost of checking.
// - Who guesses: anyone who reaches the port, from one address or from many (a botnet,
//   an IPv6 /64, all of 127/8 on the host itself). A source is an IPv4 address or an IPv6
//   /64 (auth/client_source.h): one host usually owns a whole /64.
// - What they must not get: (1) a rate of checked guesses above the per-source allowance
//   below; (2) the admins locked out: no bucket shared between sources, so no flood from
//   other addresses can make the right credential wait; (3) unbounded memory or CPU: both
//   tables are bounded, and a source out of attempts is answered without any hashing.
//
// The rules.
// - Per source: `per_source.burst` attempts at once, then one every `refill_every`. Each
//   check takes one unit BEFORE it runs (so concurrent requests cannot overspend) and a
//   success gives it back: successes are never counted against anyone. A source with no
//   unit is answered 429 and what it sent is not checked, not even a right credential:
//   answering it would tell a guesser at that address when it hit. Those who share an
//   address with a guesser (NAT, a reverse proxy in front) wait with it.
// - Per credential (a key naming what was guessed at: a user name, or a prefix of the
//   presented token's digest): failures against it from all sources are counted in its
//   own bucket. A credential whose bucket is empty is under attack; it is never refused
//   for that (its owner would be locked out by strangers), but each further failure
//   against it drains the failing source's whole allowance, so a guesser spread over many
//   sources gets one guess per source per `refill_every` instead of a burst each.
//
// Bounds: `max_keys` sources and credentials (65,536 each; an entry costs about 150
// bytes, so about 20 MB for both tables when full). A new key
// in a full table evicts the least recently used one (auth/recent_buckets.h); one
// evicted while still draining returns with a full allowance, counted in
// stats().sources_forgotten. So a guesser needs more sources than the table holds, all
// cycled faster than a bucket refills, to gain a fresh burst per source, and never
// makes anyone else wait.
//
// Threading: every call is safe from any thread (one mutex, held for two map lookups).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string_view>

#include "auth/recent_buckets.h"
#include "core/clock.h"

namespace trainwatch::auth {

struct GuessLimits {
  BucketShape per_source{10, Millis(6'000), 65'536};
  BucketShape per_credential{10, Millis(6'000), 65'536};
};

class GuessThrottle {
 public:
  explicit GuessThrottle(GuessLimits limits = {});

  // Reserves one attempt for `source`: nullopt means check the credential now and then
  // call succeeded() or failed(); otherwise how long the source must wait, and the
  // credential must not be checked.
  std::optional<Millis> begin(std::string_view source, MonoTime now);
  // The reserved attempt proved a credential: its unit goes back to the source.
  void succeeded(std::string_view source, MonoTime now);
  // The reserved attempt was wrong, guessing at `credential`.
  void failed(std::string_view source, std::string_view credential, MonoTime now);

  // Entries in each table, and those evicted at the bound before they refilled. For
  // tokens every random guess is a credential key of its own, so that table turns over
  // under any flood; the sources' count is the one that says the bound is too small.
  struct Stats {
    size_t sources = 0;
    size_t credentials = 0;
    uint64_t sources_forgotten = 0;
    uint64_t credentials_forgotten = 0;
  };
  Stats stats() const;

 private:
  mutable std::mutex mu_;
  RecentBuckets sources_;
  RecentBuckets credentials_;
};

}  // namespace trainwatch::auth
