#include "auth/client_source.h"

#include <gtest/gtest.h>

namespace trainwatch::auth {
namespace {

TEST(ClientSourceTest, IPv4IsItselfAndIPv6IsItsSlash64) {
  EXPECT_EQ(client_source("127.3.4.5"), "127.3.4.5");
  EXPECT_EQ(client_source("::ffff:10.1.2.3"), "10.1.2.3");
  EXPECT_EQ(client_source("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::/64");
  EXPECT_EQ(client_source("2001:db8:1:2:ffff:ffff:ffff:ffff"), "2001:db8:1:2::/64");
  EXPECT_EQ(client_source("::1"), "0:0:0:0::/64");
  EXPECT_EQ(client_source("not an address"), "not an address");
}

}  // namespace
}  // namespace trainwatch::auth
