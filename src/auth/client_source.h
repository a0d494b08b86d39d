// What one guesser is, for counting wrong credentials: the TCP peer's IPv4 address, or
// the /64 of an IPv6 one (a host is usually given a whole /64 and can pick any address in
// it, so counting per IPv6 address would give it 2^64 allowances). An IPv4 address
// mapped into IPv6 (::ffff:a.b.c.d) is that IPv4 address. Anything that does not parse is
// its own source, as written.
#pragma once

#include <string>
#include <string_view>

namespace trainwatch::auth {

std::string client_source(std::string_view remote_address);

}  // namespace trainwatch::auth
