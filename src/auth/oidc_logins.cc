#include "auth/oidc_logins.h"

#include <openssl/sha.h>

#include "auth/admin_auth.h"
#include "auth/id_token.h"

namespace trainwatch::auth {

std::optional<OidcLogins::Login> OidcLogins::open() {
  Login login{random_token(), random_token(), random_token(), random_token()};
  if (login.state.empty() || login.browser.empty() || login.code_verifier.empty() || login.nonce.empty())
    return std::nullopt;
  const MonoTime now = clock_.monotonic_time();
  std::lock_guard lock(mu_);
  drop_expired(now);
  while (logins_.size() >= kMaxLogins) {
    logins_.erase(oldest_first_.front());
    oldest_first_.pop_front();
  }
  oldest_first_.push_back(login.state);
  logins_.emplace(login.state, Entry{login, now + kTtl, std::prev(oldest_first_.end())});
  return login;
}

std::optional<OidcLogins::Login> OidcLogins::redeem(std::string_view state, std::string_view browser) {
  std::lock_guard lock(mu_);
  drop_expired(clock_.monotonic_time());
  auto it = logins_.find(state);
  if (it == logins_.end()) return std::nullopt;
  Login login = std::move(it->second.login);
  oldest_first_.erase(it->second.age);
  logins_.erase(it);
  if (browser.empty() || login.browser != browser) return std::nullopt;
  return login;
}

size_t OidcLogins::size() const {
  std::lock_guard lock(mu_);
  return logins_.size();
}

void OidcLogins::drop_expired(MonoTime now) {
  while (!oldest_first_.empty()) {
    auto it = logins_.find(oldest_first_.front());
    if (it->second.expires > now) break;
    logins_.erase(it);
    oldest_first_.pop_front();
  }
}

std::string pkce_challenge(std::string_view code_verifier) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(code_verifier.data()), code_verifier.size(), digest);
  return base64url_encode(std::string_view(reinterpret_cast<const char*>(digest), sizeof digest));
}

}  // namespace trainwatch::auth
