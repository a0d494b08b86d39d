#include "cli/listen_address.h"

namespace trainwatch::cli {

Result<HostPort> parse_listen_address(std::string_view text) {
  auto bad = [text](std::string_view why) {
    return make_error("cli.listen", "'" + std::string(text) + "' " + std::string(why) +
                                        "; expected HOST:PORT such as 127.0.0.1:8080 (PORT 0 to 65535)");
  };
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return bad("has no port");
  std::string_view host = text.substr(0, colon);
  const std::string_view digits = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host.empty()) return bad("has no host");
  // At most 5 digits before the value is read, so no length of input can overflow it.
  if (digits.empty() || digits.size() > 5) return bad("has no port number");
  uint32_t port = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return bad("has a port that is not a number");
    port = port * 10 + static_cast<uint32_t>(c - '0');
  }
  if (port > 65535) return bad("has a port over 65535");
  return HostPort{std::string(host), static_cast<uint16_t>(port)};
}

}  // namespace trainwatch::cli
