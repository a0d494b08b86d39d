#include "auth/client_source.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cstdio>

namespace trainwatch::auth {

std::string client_source(std::string_view remote_address) {
  std::string text(remote_address);
  std::array<unsigned char, 16> bytes{};
  if (inet_pton(AF_INET6, text.c_str(), bytes.data()) != 1) return text;  // IPv4, or not an address
  constexpr std::array<unsigned char, 12> kMappedPrefix = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (std::equal(kMappedPrefix.begin(), kMappedPrefix.end(), bytes.begin())) {
    return std::to_string(bytes[12]) + "." + std::to_string(bytes[13]) + "." + std::to_string(bytes[14]) +
           "." + std::to_string(bytes[15]);
  }
  char out[32];
  std::snprintf(out, sizeof out, "%x:%x:%x:%x::/64", bytes[0] << 8 | bytes[1], bytes[2] << 8 | bytes[3],
                bytes[4] << 8 | bytes[5], bytes[6] << 8 | bytes[7]);
  return out;
}

}  // namespace trainwatch::auth
