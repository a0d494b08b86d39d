#include "auth/id_token.h"

#include <openssl/core_names.h>
#include <openssl/param_build.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <optional>
#include <vector>

#include <boost/json/parse.hpp>

namespace trainwatch::auth {
namespace {

namespace json = boost::json;

// Base64url per RFC 4648 §5, unpadded as JWTs use it; padding is tolerated.
int decode_char(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '-') return 62;
  if (c == '_') return 63;
  return -1;
}

Error bad(std::string message) { return Error{"oidc.bad_token", std::move(message)}; }

std::vector<std::string_view> split_compact(std::string_view token) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (parts.size() < 4) {
    const size_t dot = token.find('.', start);
    parts.push_back(
        token.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return parts;
}

std::optional<json::object> decode_json_part(std::string_view part) {
  bool ok = false;
  const std::string text = base64url_decode(part, ok);
  if (!ok) return std::nullopt;
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return std::nullopt;
  return v.as_object();
}

std::optional<int64_t> number_claim(const json::object& claims, std::string_view key) {
  const json::value* v = claims.if_contains(key);
  if (v == nullptr) return std::nullopt;
  if (v->is_int64()) return v->as_int64();
  if (v->is_uint64()) return static_cast<int64_t>(v->as_uint64());
  if (v->is_double()) return static_cast<int64_t>(v->as_double());
  return std::nullopt;
}

// Why the token's audience is not ours (OpenID Connect Core 3.1.3.7, points 3 to 5), or
// nullopt when it is.
std::optional<std::string> audience_refusal(const json::object& claims, const IdTokenExpectations& expect) {
  const json::value* aud = claims.if_contains("aud");
  std::vector<std::string> audiences;
  if (aud != nullptr && aud->is_string()) audiences.emplace_back(aud->as_string());
  if (aud != nullptr && aud->is_array()) {
    for (const auto& a : aud->as_array()) {
      if (!a.is_string()) return "the ID token's aud holds something other than client ids";
      audiences.emplace_back(a.as_string());
    }
  }
  if (std::find(audiences.begin(), audiences.end(), expect.client_id) == audiences.end())
    return "the ID token is not for this client (aud lacks " + expect.client_id + ")";
  const json::value* azp = claims.if_contains("azp");
  const bool azp_ours = azp != nullptr && azp->is_string() && azp->as_string() == expect.client_id;
  if (azp != nullptr && !azp_ours)
    return "the ID token was issued to another party (azp is not " + expect.client_id + ")";
  if (audiences.size() == 1) return std::nullopt;
  if (!azp_ours) return "the ID token names other audiences too, and no azp of " + expect.client_id;
  for (const auto& a : audiences) {
    const auto& trusted = expect.trusted_audiences;
    if (a != expect.client_id && std::find(trusted.begin(), trusted.end(), a) == trusted.end())
      return "the ID token is also for '" + a + "', which auth.oidc.trusted_audiences does not name";
  }
  return std::nullopt;
}

bool signature_valid(EVP_PKEY* key, std::string_view signed_part, const std::string& signature) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key) != 1) return false;
  return EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()),
                          signature.size(), reinterpret_cast<const unsigned char*>(signed_part.data()),
                          signed_part.size()) == 1;
}

}  // namespace

std::string base64url_decode(std::string_view text, bool& ok) {
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);
  std::string out;
  out.reserve(text.size() * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    const int v = decode_char(c);
    if (v < 0) {
      ok = false;
      return {};
    }
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  ok = bits < 6;  // one leftover character cannot be a whole byte
  return out;
}

std::string base64url_encode(std::string_view bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (unsigned char c : bytes) {
    acc = (acc << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(kAlphabet[(acc >> bits) & 0x3f]);
    }
  }
  if (bits > 0) out.push_back(kAlphabet[(acc << (6 - bits)) & 0x3f]);
  return out;
}

Result<PublicKey> rsa_key_from_jwk(std::string_view n_text, std::string_view e_text) {
  bool n_ok = false;
  bool e_ok = false;
  const std::string n = base64url_decode(n_text, n_ok);
  const std::string e = base64url_decode(e_text, e_ok);
  if (!n_ok || !e_ok || n.empty() || e.empty())
    return Error{"oidc.jwks", "an RSA key's n or e is not base64url"};
  // 2048 bits is what every provider issues; smaller keys can be factored.
  if (n.size() * 8 < 2048) return Error{"oidc.jwks", "an RSA key is shorter than 2048 bits"};
  using Bn = std::unique_ptr<BIGNUM, decltype(&BN_free)>;
  Bn bn_n(BN_bin2bn(reinterpret_cast<const unsigned char*>(n.data()), static_cast<int>(n.size()), nullptr),
          BN_free);
  Bn bn_e(BN_bin2bn(reinterpret_cast<const unsigned char*>(e.data()), static_cast<int>(e.size()), nullptr),
          BN_free);
  std::unique_ptr<OSSL_PARAM_BLD, decltype(&OSSL_PARAM_BLD_free)> build(OSSL_PARAM_BLD_new(),
                                                                        OSSL_PARAM_BLD_free);
  if (!bn_n || !bn_e || !build ||
      OSSL_PARAM_BLD_push_BN(build.get(), OSSL_PKEY_PARAM_RSA_N, bn_n.get()) != 1 ||
      OSSL_PARAM_BLD_push_BN(build.get(), OSSL_PKEY_PARAM_RSA_E, bn_e.get()) != 1) {
    return Error{"oidc.jwks", "cannot build an RSA key"};
  }
  std::unique_ptr<OSSL_PARAM, decltype(&OSSL_PARAM_free)> params(OSSL_PARAM_BLD_to_param(build.get()),
                                                                 OSSL_PARAM_free);
  std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> ctx(
      EVP_PKEY_CTX_new_from_name(nullptr, "RSA", nullptr), EVP_PKEY_CTX_free);
  EVP_PKEY* key = nullptr;
  if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1 ||
      EVP_PKEY_fromdata(ctx.get(), &key, EVP_PKEY_PUBLIC_KEY, params.get()) != 1) {
    return Error{"oidc.jwks", "cannot build an RSA key"};
  }
  return PublicKey(key, EVP_PKEY_free);
}

Result<KeySet> parse_jwks(std::string_view text) {
  boost::system::error_code ec;
  json::value doc = json::parse(text, ec);
  if (ec || !doc.is_object() || !doc.as_object().contains("keys") || !doc.at("keys").is_array())
    return Error{"oidc.jwks", "the provider's jwks_uri did not answer a JWKS ({\"keys\": [...]})"};
  KeySet keys;
  for (const auto& k : doc.at("keys").as_array()) {
    if (!k.is_object()) continue;
    const auto& o = k.as_object();
    auto str = [&](std::string_view key) -> std::string {
      const json::value* v = o.if_contains(key);
      return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
    };
    if (str("kty") != "RSA" || (o.contains("use") && str("use") != "sig")) continue;
    auto key = rsa_key_from_jwk(str("n"), str("e"));
    if (key) keys[str("kid")] = std::move(*key);
  }
  if (keys.empty()) return Error{"oidc.jwks", "the provider's JWKS has no RSA signing key"};
  return keys;
}

std::string key_id_of(std::string_view token) {
  auto parts = split_compact(token);
  if (parts.size() != 3) return {};
  auto header = decode_json_part(parts[0]);
  if (!header) return {};
  const json::value* kid = header->if_contains("kid");
  return kid != nullptr && kid->is_string() ? std::string(kid->as_string()) : std::string();
}

Result<json::object> verify_id_token(std::string_view token, const KeySet& keys,
                                     const IdTokenExpectations& expect, SystemTime now) {
  auto parts = split_compact(token);
  if (parts.size() != 3) return bad("the ID token is not a compact JWS (three parts)");
  auto header = decode_json_part(parts[0]);
  auto claims = decode_json_part(parts[1]);
  if (!header || !claims) return bad("the ID token's header or claims are not base64url JSON");
  const json::value* alg = header->if_contains("alg");
  // Only RS256: "none" and HS256-with-the-public-key are the classic forgeries.
  if (alg == nullptr || !alg->is_string() || alg->as_string() != "RS256")
    return bad("the ID token is not signed with RS256");
  const std::string kid = key_id_of(token);
  PublicKey key;
  if (auto it = keys.find(kid); it != keys.end()) {
    key = it->second;
  } else if (kid.empty() && keys.size() == 1) {
    key = keys.begin()->second;
  } else {
    return Error{"oidc.unknown_key",
                 "the ID token is signed with key '" + kid + "', which the provider's JWKS lacks"};
  }
  bool sig_ok = false;
  const std::string signature = base64url_decode(parts[2], sig_ok);
  const std::string_view signed_part = token.substr(0, parts[0].size() + 1 + parts[1].size());
  if (!sig_ok || !signature_valid(key.get(), signed_part, signature))
    return bad("the ID token's signature does not verify with the provider's key");
  const json::value* iss = claims->if_contains("iss");
  if (iss == nullptr || !iss->is_string() || iss->as_string() != expect.issuer)
    return bad("the ID token's issuer is not " + expect.issuer);
  if (auto refused = audience_refusal(*claims, expect)) return bad(*refused);
  const int64_t now_s = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  const int64_t skew_s = kClockSkew.count() / 1000;
  auto exp = number_claim(*claims, "exp");
  if (!exp || *exp + skew_s <= now_s) return bad("the ID token has expired");
  auto iat = number_claim(*claims, "iat");
  if (!iat || *iat - skew_s > now_s) return bad("the ID token was issued in the future");
  const json::value* nonce = claims->if_contains("nonce");
  if (nonce == nullptr || !nonce->is_string() || nonce->as_string() != expect.nonce)
    return bad("the ID token's nonce is not the one this login sent");
  // Who the person is at the provider: at most 255 characters (OpenID Connect Core 2).
  const json::value* sub = claims->if_contains("sub");
  if (sub == nullptr || !sub->is_string() || sub->as_string().empty() || sub->as_string().size() > 255)
    return bad("the ID token names no subject (sub)");
  return std::move(*claims);
}

}  // namespace trainwatch::auth
