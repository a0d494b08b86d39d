// AdminAuth: who may change things. Admin tokens (config or environment) are kept only as
// SHA-256 digests; a token proves itself as `Authorization: Bearer <token>` (API clients)
// or once at the login page, which trades it for a session.
//
// Sessions: a random 256-bit id in a cookie (HttpOnly, SameSite=Strict, Secure behind
// https) and, per session, a random CSRF token that every form and every write from the
// dashboard's script must echo. SameSite=Strict already keeps other sites' forms from
// carrying the cookie; the CSRF token covers browsers and proxies that drop SameSite.
//
// Bounds: at most kMaxSessions live sessions; a login beyond that evicts the session
// closest to expiry. Sessions expire after auth.session_ttl and do not survive a restart
// (everyone logs in again: sessions are cheap, secrets on disk are not).
//
// Guessing: wrong tokens (bearer or login) are counted per client address in a bucket
// table (kFailureLimits): 10 at once, then one more every 6 s. An address with no
// attempts left is answered 429 with Retry-After and what it sends is not checked at all,
// so even the right token waits. Addresses are the TCP peer's (a reverse proxy in front
// makes every client one address: they then share one allowance).
//
// Reload: reconfigure() replaces the tokens (SIGHUP); a changed token set ends every
// session, since a session is worth what the token that opened it was worth and which
// token that was is not kept.
//
// Threading: every call is safe from any thread (one mutex around tokens and sessions;
// the failure table has its own).
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/bucket_table.h"
#include "config/web_config.h"
#include "core/clock.h"

namespace trainwatch::auth {

struct Session {
  std::string id;
  std::string csrf_token;
  MonoTime expires{};
};

class AdminAuth {
 public:
  static constexpr size_t kMaxSessions = 1000;
  // Wrong tokens per client address: 10 at once, one more every 6 s (10 a minute), for
  // at most 10,000 addresses (bucket_table.h says what happens beyond).
  static constexpr BucketLimits kFailureLimits{10, Millis(6'000), 10'000};

  AdminAuth(const AuthConfig& config, const Clock& clock);

  // Takes the tokens and session TTL of `config`. Returns true when the token set
  // changed, and then every session has been dropped.
  bool reconfigure(const AuthConfig& config);

  // False when no admin token is configured: then nothing can be changed through HTTP.
  bool enabled() const;
  bool token_valid(std::string_view token) const;
  Millis session_ttl() const;

  // How long `address` must wait before a token it sends is checked again; nullopt: it
  // may try now. Callers answer 429 with Retry-After without checking the token.
  std::optional<Millis> throttled(std::string_view address) const;
  // Counts one wrong token from `address`. Const: readers that merely look at a token
  // (views/audience.h) count their failures too, or they would be an unthrottled oracle.
  void record_failure(std::string_view address) const;

  // A new session for a valid token; nullopt for a wrong one, which counts as a failure
  // of `address`.
  std::optional<Session> login(std::string_view token, std::string_view address);
  void logout(std::string_view session_id);
  std::optional<Session> session(std::string_view session_id) const;

 private:
  bool digest_known(const std::string& digest) const;  // mu_ held

  const Clock& clock_;
  mutable std::mutex mu_;
  std::vector<std::string> digests_;  // sorted, so two token sets compare as sets
  Millis ttl_;
  std::map<std::string, Session, std::less<>> sessions_;  // by id
  mutable BucketTable failures_{kFailureLimits};          // has its own lock
};

// 32 random bytes from the OS's CSPRNG, as 64 hex digits.
std::string random_token();

}  // namespace trainwatch::auth
