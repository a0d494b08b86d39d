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
// Threading: every call is safe from any thread (one mutex around the session map).
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

  // False when no admin token is configured: then nothing can be changed through HTTP.
  bool enabled() const { return !digests_.empty(); }
  bool token_valid(std::string_view token) const;
  Millis session_ttl() const { return ttl_; }

  // A new session for a valid token; nullopt for a wrong one.
  std::optional<Session> login(std::string_view token);
  void logout(std::string_view session_id);
  std::optional<Session> session(std::string_view session_id) const;

 private:
  std::vector<std::string> digests_;
  const Clock& clock_;
  Millis ttl_;
  mutable std::mutex mu_;
  std::map<std::string, Session, std::less<>> sessions_;  // by id
};

// 32 random bytes from the OS's CSPRNG, as 64 hex digits.
std::string random_token();

}  // namespace trainwatch::auth
