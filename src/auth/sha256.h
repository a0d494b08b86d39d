// SHA-256 as lower-case hex: how admin tokens are stored and compared (a token is
// random and long, so a plain digest is enough; no salt or stretching is needed).
#pragma once

#include <string>
#include <string_view>

namespace trainwatch::auth {

std::string sha256_hex(std::string_view data);

}  // namespace trainwatch::auth
