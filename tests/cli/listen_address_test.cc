#include "cli/listen_address.h"

#include <gtest/gtest.h>

namespace trainwatch::cli {
namespace {

TEST(ListenAddress, ReadsHostAndPort) {
  auto v4 = parse_listen_address("127.0.0.1:8080");
  ASSERT_TRUE(v4.ok());
  EXPECT_EQ(v4->host, "127.0.0.1");
  EXPECT_EQ(v4->port, 8080);
  auto v6 = parse_listen_address("[::1]:0");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 0);
}

TEST(ListenAddress, BadValuesAreErrorsNotExceptions) {
  for (const char* bad : {"host:abc", "host:", ":8080", "8080", "host:65536", "host:99999999999999999999",
                          "host:-1", "host:80x", ""}) {
    auto parsed = parse_listen_address(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.error().message.find("expected HOST:PORT"), std::string::npos) << parsed.error().message;
  }
}

}  // namespace
}  // namespace trainwatch::cli
