#include "net/local_address.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <cstring>
#include <memory>

namespace trainwatch::net {
namespace {

// An IPv4 address in host order, as IPv4 or as an IPv6 address that carries one (mapped
// ::ffff:a.b.c.d or compatible ::a.b.c.d, which some stacks still route to it).
std::optional<uint32_t> ipv4_of(const sockaddr* address) {
  if (address->sa_family == AF_INET) {
    return ntohl(reinterpret_cast<const sockaddr_in*>(address)->sin_addr.s_addr);
  }
  const in6_addr& a = reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr;
  if (IN6_IS_ADDR_V4MAPPED(&a) || (IN6_IS_ADDR_V4COMPAT(&a))) {
    uint32_t v4 = 0;
    std::memcpy(&v4, a.s6_addr + 12, 4);
    return ntohl(v4);
  }
  return std::nullopt;
}

std::string text_of(const sockaddr* address) {
  char text[INET6_ADDRSTRLEN] = {};
  if (address->sa_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(address)->sin_addr, text, sizeof text);
  } else {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr, text, sizeof text);
  }
  return text;
}

// What kind of local address it is by its number alone, or nullptr.
const char* kind_of(const sockaddr* address) {
  if (auto v4 = ipv4_of(address)) {
    if ((*v4 >> 24) == 127) return "a loopback address";
    if ((*v4 >> 16) == 0xa9fe) return "a link-local address";
    if (*v4 == 0) return "the unspecified address, which reaches this host";
    return nullptr;
  }
  const in6_addr& a = reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr;
  if (IN6_IS_ADDR_LOOPBACK(&a)) return "a loopback address";
  if (IN6_IS_ADDR_LINKLOCAL(&a)) return "a link-local address";
  if (IN6_IS_ADDR_UNSPECIFIED(&a)) return "the unspecified address, which reaches this host";
  return nullptr;
}

bool same_address(const sockaddr* a, const sockaddr* b) {
  const auto a4 = ipv4_of(a), b4 = ipv4_of(b);
  if (a4 || b4) return a4 && b4 && *a4 == *b4;
  return std::memcmp(&reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr,
                     &reinterpret_cast<const sockaddr_in6*>(b)->sin6_addr, sizeof(in6_addr)) == 0;
}

bool on_an_interface(const sockaddr* address) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return false;
  std::unique_ptr<ifaddrs, void (*)(ifaddrs*)> owned(list, freeifaddrs);
  for (const ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    const sockaddr* own = i->ifa_addr;
    if (own == nullptr || (own->sa_family != AF_INET && own->sa_family != AF_INET6)) continue;
    if (same_address(own, address)) return true;
  }
  return false;
}

}  // namespace

std::optional<std::string> local_address(const sockaddr* address) {
  if (address->sa_family != AF_INET && address->sa_family != AF_INET6) return "a local socket";
  const std::string text = text_of(address);
  if (const char* kind = kind_of(address)) return text + " is " + kind;
  if (on_an_interface(address)) return text + " is an address of this host";
  return std::nullopt;
}

}  // namespace trainwatch::net
