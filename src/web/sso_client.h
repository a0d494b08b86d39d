// SsoClient: the server's side of talking to the OpenID Connect provider: its discovery
// document (/.well-known/openid-configuration under the issuer), its keys (jwks_uri) and
// its token endpoint. Discovery is cached and read again after any failure. The keys are
// read off the login's path, with a short deadline, by ProviderKeys (provider_keys.h):
// at start, and when an ID token names a `kid` they lack (the provider rotated its keys).
//
// Threading: the exchanges are blocking libcurl calls (each at most kHttpTimeout), so
// they run on this client's own worker thread, never on the HTTP server's: post() queues
// a job there (at most kMaxQueued waiting; beyond that it refuses, and the caller answers
// 503). discovery(), exchange_code() and verify() are for that thread only; their cache
// needs no lock.
//
// Errors say whose fault they are: "oidc.discovery", "oidc.token" and
// "oidc.keys_unreachable" are the provider's (it cannot be reached or answers wrong: the
// login answers 502); "oidc.bad_token" and "oidc.unknown_key" the token's (403).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <boost/json/object.hpp>

#include "auth/id_token.h"
#include "config/web_config.h"
#include "core/clock.h"
#include "core/result.h"
#include "web/provider_keys.h"

namespace trainwatch::web {

struct ProviderEndpoints {
  std::string authorization_endpoint;
  std::string token_endpoint;
  std::string jwks_uri;
  std::string end_session_endpoint;  // empty: the provider has none
};

class SsoClient {
 public:
  static constexpr size_t kMaxQueued = 64;
  static constexpr Millis kHttpTimeout{10'000};
  static constexpr size_t kMaxResponseBytes = 1 << 20;

  SsoClient(OidcConfig config, const Clock& clock);
  ~SsoClient();
  SsoClient(const SsoClient&) = delete;
  SsoClient& operator=(const SsoClient&) = delete;

  const OidcConfig& config() const { return config_; }

  // Runs `job` on the worker thread; false when kMaxQueued jobs wait already.
  bool post(std::function<void()> job);

  // Worker thread only.
  Result<ProviderEndpoints> discovery();
  // The ID token the token endpoint gives for `code` (client_secret_post, PKCE verifier).
  Result<std::string> exchange_code(const std::string& code, const std::string& code_verifier);
  // The ID token's claims once it verifies (auth/id_token.h) with the provider's keys
  // (ProviderKeys::keys_for).
  Result<boost::json::object> verify(const std::string& id_token, const std::string& nonce);

 private:
  void run();

  const OidcConfig config_;
  const Clock& clock_;
  std::optional<ProviderEndpoints> endpoints_;  // worker only
  ProviderKeys keys_;

  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;  // mu_
  bool stopping_ = false;                   // mu_
  std::thread worker_;                      // last: started once the rest exists
};

}  // namespace trainwatch::web
