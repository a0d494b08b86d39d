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
// Guessing: every token check goes through gate() (auth/credential_gate.h, whose
// throttle's header has the threat model): wrong tokens are counted per source and per
// credential, a source out of attempts is answered 429 unchecked, and nobody waits for
// another source's failures.
//
// Reload: reconfigure() replaces the tokens (SIGHUP); a changed token set ends every
// session, since a session is worth what the token that opened it was worth and which
// token that was is not kept.
//
// Threading: every call is safe from any thread (one mutex around tokens and sessions;
// the gate has its own).
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/credential_gate.h"
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

  AdminAuth(const AuthConfig& config, const Clock& clock);

  // Takes the tokens and session TTL of `config`. Returns true when the token set
  // changed, and then every session has been dropped.
  bool reconfigure(const AuthConfig& config);

  // False when no admin token is configured: then nothing can be changed through HTTP.
  bool enabled() const;
  bool token_valid(std::string_view token) const;
  Millis session_ttl() const;

  // Where every check of a token (and later a password) passes: throttled and counted.
  // Const: readers that merely look at a token (views/audience.h) count their failures
  // too, or they would be an unthrottled oracle.
  CredentialGate& gate() const { return gate_; }

  // A new session for a valid token; nullopt for a wrong one. Callers check the token
  // through gate() first (auth/admin_token_check.h); this checks it again under the lock
  // that inserts the session, for a reload in between.
  std::optional<Session> login(std::string_view token);
  void logout(std::string_view session_id);
  std::optional<Session> session(std::string_view session_id) const;

 private:
  bool digest_known(const std::string& digest) const;  // mu_ held

  const Clock& clock_;
  mutable std::mutex mu_;
  std::vector<std::string> digests_;  // sorted, so two token sets compare as sets
  Millis ttl_;
  std::map<std::string, Session, std::less<>> sessions_;  // by id
  mutable CredentialGate gate_;                           // has its own locks
};

// 32 random bytes from the OS's CSPRNG, as 64 hex digits.
std::string random_token();

}  // namespace trainwatch::auth
