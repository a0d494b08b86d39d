// OidcLogins: the single sign-on logins under way, kept on the server. GET /login/oidc
// opens one: a random `state` (sent to the provider and back), a PKCE code verifier and
// a nonce (never leave the server but as the S256 challenge and inside the ID token), and
// the pre-login browser it belongs to (a random id in a cookie). The callback must bring
// back a state this server handed out, from the same browser, within kTtl, once.
//
// Bounds: at most kMaxLogins under way; opening one more drops the oldest (that person's
// callback is refused and a new login works).
//
// Threading: every call is safe from any thread (one mutex).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "auth/one_shot_table.h"
#include "core/clock.h"

namespace trainwatch::auth {

class OidcLogins {
 public:
  static constexpr size_t kMaxLogins = 10'000;
  static constexpr Millis kTtl{600'000};

  struct Login {
    std::string state;
    std::string browser;        // the pre-login cookie's value
    std::string code_verifier;  // PKCE (RFC 7636)
    std::string nonce;
  };

  explicit OidcLogins(const Clock& clock) : by_state_(clock, kMaxLogins, kTtl) {}

  // A new login; nullopt when the OS has no randomness to give.
  std::optional<Login> open();
  // The login of `state` when it is open, unexpired and was opened by `browser`; it is
  // closed either way (one state, one callback).
  std::optional<Login> redeem(std::string_view state, std::string_view browser);

  size_t size() const;

 private:
  OneShotTable<Login> by_state_;
};

// The PKCE S256 challenge of a verifier: base64url(SHA-256(verifier)).
std::string pkce_challenge(std::string_view code_verifier);

}  // namespace trainwatch::auth
