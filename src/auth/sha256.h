// SHA-256 as lower-case hex: how admin tokens are stored and compared (a token is
// random and long, so a plain digest is enough; no salt or stretching is needed).
#pragma once

#include <string>
#include <string_view>

namespace trainwatch {

std::string sha256_hex(std::string_view data);

// Compares two strings in time that depends only on their lengths: for digests and
// CSRF tokens, so a timing attack learns nothing about how many leading bytes matched.
bool constant_time_equal(std::string_view a, std::string_view b);

}  // namespace trainwatch
