// The HOST:PORT of a `--listen` option (`serve`, `agent`). A bad value is an error with
// one sentence to print, never an exception: "host:abc" once aborted the server.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"

namespace trainwatch::cli {

struct HostPort {
  std::string host;  // as written; brackets around an IPv6 address are dropped
  uint16_t port = 0;
};

// "127.0.0.1:8080", "[::1]:0", "0.0.0.0:80". The host must be non-empty and the port all
// digits, 0 to 65535 (0: any free port).
Result<HostPort> parse_listen_address(std::string_view text);

}  // namespace trainwatch::cli
