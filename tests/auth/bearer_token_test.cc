// What every route takes for "a bearer token was presented": the scheme in any case, then
// spaces, then the token; anything else is no bearer token (a cookie or nothing may follow).
#include <gtest/gtest.h>

#include "auth/bearer_token.h"

namespace trainwatch::auth {
namespace {

TEST(BearerToken, TheSchemeInAnyCaseThenSpacesThenTheToken) {
  EXPECT_EQ(bearer_token("Bearer abc"), "abc");
  EXPECT_EQ(bearer_token("bearer abc"), "abc");
  EXPECT_EQ(bearer_token("BEARER   abc  "), "abc");
}

TEST(BearerToken, TheSchemeWithNothingAfterItIsAnEmptyTokenNotNone) {
  EXPECT_EQ(bearer_token("Bearer "), "");
  EXPECT_EQ(bearer_token("Bearer    "), "");
}

TEST(BearerToken, NoHeaderOrAnotherSchemeIsNoBearerToken) {
  EXPECT_EQ(bearer_token(""), std::nullopt);
  EXPECT_EQ(bearer_token("Bearer"), std::nullopt);
  EXPECT_EQ(bearer_token("Bearerabc"), std::nullopt);
  EXPECT_EQ(bearer_token("Basic YWxhZGRpbjpvcGVuc2VzYW1l"), std::nullopt);
  EXPECT_EQ(bearer_token("Token abc"), std::nullopt);
}

}  // namespace
}  // namespace trainwatch::auth
