#include "checks/resolv_conf.h"

#include <gtest/gtest.h>

namespace trainwatch::checks {
namespace {

TEST(ResolvConf, TakesTheFirstNameserver) {
  EXPECT_EQ(
      first_nameserver("# generated\nsearch example.com\nnameserver 10.255.255.53\nnameserver 1.1.1.1\n"),
      "10.255.255.53");
  EXPECT_EQ(first_nameserver("  nameserver\t::1  # local\n"), "::1");
  EXPECT_EQ(first_nameserver("nameserver 192.0.2.1"), "192.0.2.1");  // no final newline
}

TEST(ResolvConf, SkipsCommentsAndLookalikes) {
  EXPECT_EQ(first_nameserver(
                "#nameserver 1.1.1.1\n; nameserver 2.2.2.2\nnameservers 3.3.3.3\nnameserver 4.4.4.4\n"),
            "4.4.4.4");
  EXPECT_EQ(first_nameserver("search x\noptions ndots:2\n"), std::nullopt);
  EXPECT_EQ(first_nameserver("nameserver\nnameserver   \n"), std::nullopt);
  EXPECT_EQ(first_nameserver(""), std::nullopt);
}

}  // namespace
}  // namespace trainwatch::checks
