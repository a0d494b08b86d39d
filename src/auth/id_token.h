// ID tokens of OpenID Connect: the provider's public keys (a JWKS) and the checks an ID
// token must pass before the server believes who it names (OpenID Connect Core 3.1.3.7):
// an RS256 signature by a key of the provider's JWKS, the issuer, the audience, exp and
// iat within kClockSkew, the nonce this browser's login sent, and a subject (`sub`, who
// the person is at the provider). The audience: `aud` names our client id; a token that
// names other audiences too must carry `azp` = our client id and name only audiences the
// config trusts (auth.oidc.trusted_audiences); `azp`, when present, must be our client id.
// Pure: the keys come in as JSON, time as an argument; OpenSSL does every bit of crypto.
#pragma once

#include <openssl/evp.h>

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "core/clock.h"
#include "core/result.h"

namespace trainwatch::auth {

using PublicKey = std::shared_ptr<EVP_PKEY>;
// The provider's signing keys by `kid`.
using KeySet = std::map<std::string, PublicKey, std::less<>>;

// The RSA keys ("kty": "RSA", use absent or "sig") of a JWKS document; others are
// skipped. Error "oidc.jwks" when the document is not a JWKS or has no usable key.
Result<KeySet> parse_jwks(std::string_view json);
// One RSA public key from a JWK's base64url `n` and `e`.
Result<PublicKey> rsa_key_from_jwk(std::string_view n, std::string_view e);

std::string base64url_decode(std::string_view text, bool& ok);
std::string base64url_encode(std::string_view bytes);

struct IdTokenExpectations {
  std::string issuer;
  std::string client_id;
  std::string nonce;
  // Audiences allowed beside client_id, and only when `azp` is client_id (below).
  std::vector<std::string> trusted_audiences;
};

inline constexpr Millis kClockSkew{60'000};

// The `kid` of a compact JWT's header, "" when it has none or is malformed.
std::string key_id_of(std::string_view token);

// The token's claims when every check passes. Error codes: "oidc.unknown_key" (no key of
// that kid: the provider may have rotated its keys), "oidc.bad_token" for the rest, each
// with a sentence that says which check failed.
Result<boost::json::object> verify_id_token(std::string_view token, const KeySet& keys,
                                            const IdTokenExpectations& expect, SystemTime now);

}  // namespace trainwatch::auth
