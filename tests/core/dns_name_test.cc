#include "core/dns_name.h"

#include <gtest/gtest.h>

namespace trainwatch {
namespace {

TEST(DnsName, AcceptsHostAndServiceNames) {
  EXPECT_EQ(dns_name_problem("api.internal"), "");
  EXPECT_EQ(dns_name_problem("API.Example.com."), "");
  EXPECT_EQ(dns_name_problem("_dmarc.example.com"), "");
  EXPECT_EQ(dns_name_problem("*.example.com"), "");
  EXPECT_EQ(dns_name_problem("localhost"), "");
}

TEST(DnsName, RefusesLongLabelsAndNames) {
  const std::string label63(63, 'a');
  EXPECT_EQ(dns_name_problem(label63 + ".test"), "");
  EXPECT_EQ(dns_name_problem("x." + label63 + "a.test"),
            "expected labels of at most 63 characters; label 2 has 64");
  std::string name253;
  while (name253.size() < 253) name253 += name253.empty() ? "a" : ".a";
  ASSERT_EQ(name253.size(), 253u);
  EXPECT_EQ(dns_name_problem(name253), "");
  EXPECT_EQ(dns_name_problem(name253 + "."), "");  // the root's dot is not counted
  EXPECT_EQ(dns_name_problem(name253 + "a"), "expected at most 253 characters, not 254");
}

TEST(DnsName, RefusesEmptyLabelsAndOtherCharacters) {
  EXPECT_NE(dns_name_problem(""), "");
  EXPECT_NE(dns_name_problem("."), "");
  EXPECT_NE(dns_name_problem("a..b"), "");
  EXPECT_NE(dns_name_problem(".a"), "");
  EXPECT_NE(dns_name_problem("a b.test"), "");
  EXPECT_NE(dns_name_problem("a/b.test"), "");
}

TEST(DnsName, DropsOnlyTheRootDot) {
  EXPECT_EQ(dns_name_without_root("a.test."), "a.test");
  EXPECT_EQ(dns_name_without_root("a.test"), "a.test");
  EXPECT_EQ(dns_name_without_root("."), ".");
}

}  // namespace
}  // namespace trainwatch
