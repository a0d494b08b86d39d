// Which addresses are on this host (net/local_address.h): what a notification channel may
// not reach unless the server allows it.
#include "net/local_address.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <gtest/gtest.h>

#include <string>

namespace trainwatch::net {
namespace {

std::optional<std::string> judge(const std::string& text) {
  sockaddr_in6 v6{};
  sockaddr_in v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4.sin_addr) == 1) {
    v4.sin_family = AF_INET;
    return local_address(reinterpret_cast<const sockaddr*>(&v4));
  }
  EXPECT_EQ(inet_pton(AF_INET6, text.c_str(), &v6.sin6_addr), 1) << text;
  v6.sin6_family = AF_INET6;
  return local_address(reinterpret_cast<const sockaddr*>(&v6));
}

TEST(LocalAddress, LoopbackLinkLocalAndUnspecifiedAreOnThisHostInEitherFamily) {
  EXPECT_EQ(judge("127.0.0.1"), "127.0.0.1 is a loopback address");
  EXPECT_EQ(judge("127.8.9.10"), "127.8.9.10 is a loopback address");
  EXPECT_EQ(judge("::1"), "::1 is a loopback address");
  EXPECT_EQ(judge("::ffff:127.0.0.1"), "::ffff:127.0.0.1 is a loopback address") << "an IPv4-mapped loopback";
  EXPECT_EQ(judge("169.254.169.254"), "169.254.169.254 is a link-local address");
  EXPECT_EQ(judge("fe80::1"), "fe80::1 is a link-local address");
  EXPECT_EQ(judge("0.0.0.0"), "0.0.0.0 is the unspecified address, which reaches this host");
  EXPECT_EQ(judge("::"), ":: is the unspecified address, which reaches this host");
}

TEST(LocalAddress, AddressesElsewhereAreNot) {
  EXPECT_EQ(judge("192.0.2.10"), std::nullopt);  // TEST-NET-1: on no interface here
  EXPECT_EQ(judge("2001:db8::7"), std::nullopt);
  EXPECT_EQ(judge("::ffff:192.0.2.10"), std::nullopt);
}

TEST(LocalAddress, EveryAddressOfThisHostsInterfacesIsOnThisHost) {
  ifaddrs* list = nullptr;
  ASSERT_EQ(getifaddrs(&list), 0);
  int seen = 0;
  for (const ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || (i->ifa_addr->sa_family != AF_INET && i->ifa_addr->sa_family != AF_INET6))
      continue;
    EXPECT_TRUE(local_address(i->ifa_addr).has_value()) << i->ifa_name;
    ++seen;
  }
  freeifaddrs(list);
  EXPECT_GT(seen, 0) << "no interface with an address: at least loopback has one";
}

}  // namespace
}  // namespace trainwatch::net
