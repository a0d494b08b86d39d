#include "auth/oidc_logins.h"

#include <openssl/sha.h>

#include "auth/admin_auth.h"
#include "auth/id_token.h"

namespace trainwatch::auth {

std::optional<OidcLogins::Login> OidcLogins::open() {
  Login login{random_token(), random_token(), random_token(), random_token()};
  if (login.state.empty() || login.browser.empty() || login.code_verifier.empty() || login.nonce.empty())
    return std::nullopt;
  by_state_.put(login.state, login);
  return login;
}

std::optional<OidcLogins::Login> OidcLogins::redeem(std::string_view state, std::string_view browser) {
  auto login = by_state_.take(state);
  if (!login || browser.empty() || login->browser != browser) return std::nullopt;
  return login;
}

size_t OidcLogins::size() const { return by_state_.size(); }

std::string pkce_challenge(std::string_view code_verifier) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(code_verifier.data()), code_verifier.size(), digest);
  return base64url_encode(std::string_view(reinterpret_cast<const char*>(digest), sizeof digest));
}

}  // namespace trainwatch::auth
