// SHA-256 as lower-case hex: how admin tokens are stored and compared (a token is
// random and long, so a plain digest is enough; no salt or stretching is needed); and
// HMAC-SHA256, which signs webhook bodies and alert links.
#pragma once

#include <string>
#include <string_view>

namespace trainwatch::auth {

std::string sha256_hex(std::string_view data);

// Lower-case hex HMAC-SHA256 of `data` under `key`.
std::string hmac_sha256_hex(std::string_view key, std::string_view data);

}  // namespace trainwatch::auth
