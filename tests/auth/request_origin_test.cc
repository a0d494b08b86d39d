#include "auth/request_origin.h"

#include <gtest/gtest.h>

namespace trainwatch::auth {
namespace {

TEST(RequestOriginTest, OwnOriginIsSchemeAndHostWithoutDefaultPort) {
  EXPECT_EQ(own_origin("127.0.0.1:8080", false), "http://127.0.0.1:8080");
  EXPECT_EQ(own_origin("Monitor.Example.com:443", true), "https://monitor.example.com");
  EXPECT_EQ(own_origin("monitor.example.com:80", false), "http://monitor.example.com");
  EXPECT_EQ(own_origin("monitor.example.com:8443", true), "https://monitor.example.com:8443");
  EXPECT_EQ(own_origin("[::1]:8080", false), "http://[::1]:8080");
}

TEST(RequestOriginTest, SameOriginAndRequestsWithoutBrowserHeadersPass) {
  EXPECT_FALSE(cross_origin_refusal({"http://127.0.0.1:8080", "same-origin", "127.0.0.1:8080", false}));
  EXPECT_FALSE(cross_origin_refusal({"", "", "127.0.0.1:8080", false}));      // curl
  EXPECT_FALSE(cross_origin_refusal({"", "none", "127.0.0.1:8080", false}));  // typed in the address bar
  EXPECT_FALSE(
      cross_origin_refusal({"https://monitor.example.com", "same-origin", "monitor.example.com:443", true}));
  EXPECT_FALSE(cross_origin_refusal({"HTTP://127.0.0.1:8080/", "", "127.0.0.1:8080", false}));
}

TEST(RequestOriginTest, AnotherPortOfTheSameHostIsRefusedAndNamed) {
  auto why = cross_origin_refusal({"http://127.0.0.1:9999", "same-site", "127.0.0.1:8080", false});
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("http://127.0.0.1:9999"), std::string::npos) << *why;
  EXPECT_NE(why->find("http://127.0.0.1:8080"), std::string::npos) << *why;
}

TEST(RequestOriginTest, EachHeaderRefusesOnItsOwn) {
  // Sec-Fetch-Site alone (a browser that leaves Origin out).
  auto why = cross_origin_refusal({"", "same-site", "127.0.0.1:8080", false});
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("Sec-Fetch-Site: same-site"), std::string::npos) << *why;
  EXPECT_TRUE(cross_origin_refusal({"", "cross-site", "127.0.0.1:8080", false}));
  // Origin alone: another scheme, another host, an opaque origin, no Host to compare with.
  EXPECT_TRUE(cross_origin_refusal({"http://monitor.example.com", "", "monitor.example.com", true}));
  EXPECT_TRUE(cross_origin_refusal({"http://evil.example", "", "127.0.0.1:8080", false}));
  EXPECT_TRUE(cross_origin_refusal({"null", "", "127.0.0.1:8080", false}));
  EXPECT_TRUE(cross_origin_refusal({"http://127.0.0.1:8080", "", "", false}));
  // Both present and disagreeing: the stricter wins.
  EXPECT_TRUE(cross_origin_refusal({"http://127.0.0.1:8080", "cross-site", "127.0.0.1:8080", false}));
}

}  // namespace
}  // namespace trainwatch::auth
