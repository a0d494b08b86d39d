#include "auth/id_token.h"

#include <openssl/core_names.h>
#include <openssl/rsa.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "fakes/manual_clock.h"

namespace trainwatch::auth {
namespace {

namespace json = boost::json;

// A provider's signing key, made and used through OpenSSL as a provider would.
struct SigningKey {
  std::shared_ptr<EVP_PKEY> key{EVP_RSA_gen(2048), EVP_PKEY_free};
  std::string kid;

  std::string component(const char* name) const {
    BIGNUM* bn = nullptr;
    EVP_PKEY_get_bn_param(key.get(), name, &bn);
    std::string bytes(static_cast<size_t>(BN_num_bytes(bn)), '\0');
    BN_bn2bin(bn, reinterpret_cast<unsigned char*>(bytes.data()));
    BN_free(bn);
    return base64url_encode(bytes);
  }
  json::object jwk() const {
    return {{"kty", "RSA"},
            {"use", "sig"},
            {"kid", kid},
            {"n", component(OSSL_PKEY_PARAM_RSA_N)},
            {"e", component(OSSL_PKEY_PARAM_RSA_E)}};
  }
  std::string sign(const json::object& claims, std::string alg = "RS256") const {
    const std::string head = base64url_encode(json::serialize(json::object{{"alg", alg}, {"kid", kid}}));
    const std::string body = base64url_encode(json::serialize(claims));
    const std::string input = head + "." + body;
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    size_t size = 0;
    EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key.get());
    EVP_DigestSign(ctx.get(), nullptr, &size, reinterpret_cast<const unsigned char*>(input.data()),
                   input.size());
    std::string signature(size, '\0');
    EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(signature.data()), &size,
                   reinterpret_cast<const unsigned char*>(input.data()), input.size());
    return input + "." + base64url_encode(signature.substr(0, size));
  }
};

class IdTokenTest : public ::testing::Test {
 protected:
  IdTokenTest() {
    key_.kid = "key-1";
    keys_ = parse_jwks(json::serialize(json::object{{"keys", json::array{key_.jwk()}}})).value();
  }
  int64_t now_s() const {
    return std::chrono::duration_cast<std::chrono::seconds>(clock_.system_time().time_since_epoch()).count();
  }
  json::object claims() const {
    return {{"iss", "https://idp.example"}, {"aud", "trainwatch"}, {"sub", "u1"}, {"iat", now_s()},
            {"exp", now_s() + 300},         {"nonce", "n-1"}};
  }
  Result<json::object> verify(const std::string& token) const {
    return verify_id_token(token, keys_, {"https://idp.example", "trainwatch", "n-1", {}},
                           clock_.system_time());
  }

  testing::ManualClock clock_;
  SigningKey key_;
  KeySet keys_;
};

TEST_F(IdTokenTest, AGoodTokenVerifiesAndGivesItsClaims) {
  auto verified = verify(key_.sign(claims()));
  ASSERT_TRUE(verified) << verified.error().message;
  EXPECT_EQ(verified->at("sub").as_string(), "u1");
  EXPECT_EQ(key_id_of(key_.sign(claims())), "key-1");
}

TEST_F(IdTokenTest, ATamperedTokenIsRefused) {
  const std::string token = key_.sign(claims());
  json::object other = claims();
  other["sub"] = "admin";
  const std::string forged_claims = base64url_encode(json::serialize(other));
  const size_t first = token.find('.');
  const size_t second = token.find('.', first + 1);
  const std::string swapped = token.substr(0, first + 1) + forged_claims + token.substr(second);
  auto refused = verify(swapped);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("signature"), std::string::npos);

  std::string flipped = token;
  flipped[flipped.size() - 5] = flipped[flipped.size() - 5] == 'A' ? 'B' : 'A';
  EXPECT_FALSE(verify(flipped));
}

TEST_F(IdTokenTest, AnotherKeysSignatureIsRefused) {
  SigningKey stranger;
  stranger.kid = "key-1";  // claims to be ours
  EXPECT_FALSE(verify(stranger.sign(claims())));
}

TEST_F(IdTokenTest, AnUnknownKidSaysSoSoTheKeysCanBeReadAgain) {
  SigningKey rotated;
  rotated.kid = "key-2";
  auto refused = verify(rotated.sign(claims()));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, "oidc.unknown_key");
}

TEST_F(IdTokenTest, ExpiryHonoursTheSkewAndNoMore) {
  const std::string token = key_.sign(claims());  // exp = now + 300 s
  clock_.advance(Millis(300'000) + kClockSkew - Millis(1'000));
  EXPECT_TRUE(verify(token));
  clock_.advance(Millis(1'000));
  auto expired = verify(token);
  ASSERT_FALSE(expired);
  EXPECT_NE(expired.error().message.find("expired"), std::string::npos);
}

TEST_F(IdTokenTest, EachClaimCheckRefusesItsOwnCase) {
  auto with = [&](const char* key, json::value value) {
    json::object c = claims();
    c[key] = std::move(value);
    return verify(key_.sign(c));
  };
  EXPECT_FALSE(with("aud", "someone-else"));
  EXPECT_FALSE(with("aud", json::array{"someone-else", "trainwatch"})) << "another audience, and no azp";
  EXPECT_FALSE(with("azp", "someone-else"));
  EXPECT_FALSE(with("sub", ""));
  EXPECT_FALSE(with("iss", "https://evil.example"));
  EXPECT_FALSE(with("nonce", "n-2"));
  EXPECT_FALSE(with("iat", now_s() + 3600));
  json::object no_nonce = claims();
  no_nonce.erase("nonce");
  EXPECT_FALSE(verify(key_.sign(no_nonce)));
}

// OpenID Connect Core 3.1.3.7: a token for several audiences is ours only when its azp
// is our client id, and then only if each other audience is one the config trusts.
TEST_F(IdTokenTest, ATokenForOtherAudiencesTooNeedsOurAzpAndTrustedAudiences) {
  auto verify_for = [&](json::array aud, const char* azp, std::vector<std::string> trusted) {
    json::object c = claims();
    c["aud"] = std::move(aud);
    if (azp != nullptr) c["azp"] = azp;
    const IdTokenExpectations expect{"https://idp.example", "trainwatch", "n-1", std::move(trusted)};
    return verify_id_token(key_.sign(c), keys_, expect, clock_.system_time());
  };
  EXPECT_TRUE(verify_for({"trainwatch"}, nullptr, {}));
  EXPECT_TRUE(verify_for({"trainwatch"}, "trainwatch", {}));
  EXPECT_TRUE(verify_for({"trainwatch", "reports"}, "trainwatch", {"reports"}));
  auto untrusted = verify_for({"trainwatch", "billing"}, "trainwatch", {"reports"});
  ASSERT_FALSE(untrusted);
  EXPECT_NE(untrusted.error().message.find("'billing'"), std::string::npos) << untrusted.error().message;
  EXPECT_FALSE(verify_for({"trainwatch", "reports"}, nullptr, {"reports"})) << "trusted, but no azp";
  EXPECT_FALSE(verify_for({"trainwatch", "reports"}, "reports", {"reports"})) << "azp another client";
  EXPECT_FALSE(verify_for({"trainwatch", 7}, "trainwatch", {}));
}

TEST_F(IdTokenTest, OnlyRs256IsAccepted) {
  EXPECT_FALSE(verify(key_.sign(claims(), "none")));
  EXPECT_FALSE(verify(key_.sign(claims(), "HS256")));
  EXPECT_FALSE(verify("not-a-jwt"));
  EXPECT_FALSE(verify("a.b.c"));
}

TEST(JwksTest, BadDocumentsAndWeakKeysAreRefused) {
  EXPECT_FALSE(parse_jwks("not json"));
  EXPECT_FALSE(parse_jwks(R"({"keys": []})"));
  EXPECT_FALSE(parse_jwks(R"({"keys": [{"kty": "EC", "kid": "x"}]})"));
  EXPECT_FALSE(rsa_key_from_jwk("AQAB", "AQAB"));  // 24 bits
  EXPECT_FALSE(rsa_key_from_jwk("!!!", "AQAB"));
}

TEST(Base64UrlTest, RoundTrips) {
  for (std::string s : {"", "f", "fo", "foo", "foob", "fooba", "foobar", "\xff\xfe\x00"}) {
    bool ok = false;
    EXPECT_EQ(base64url_decode(base64url_encode(s), ok), s);
    EXPECT_TRUE(ok);
  }
  EXPECT_EQ(base64url_encode("\xfb\xff"), "-_8");
}

}  // namespace
}  // namespace trainwatch::auth
