// Causes are one sentence a person reads: "connect: connection refused". System and
// library messages start with a capital ("Connection refused"); this lowers it to follow
// the colon.
#pragma once

#include <cctype>
#include <string>

namespace trainwatch {

inline std::string lower_first(std::string text) {
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return text;
}

}  // namespace trainwatch
