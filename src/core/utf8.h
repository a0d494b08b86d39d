// UTF-8 well-formedness (RFC 3629: no overlong forms, no surrogates, nothing past
// U+10FFFF). JSON text must be UTF-8 (RFC 8259), and Boost.JSON passes any byte >= 0x80
// through unchecked, so what the agent serves is checked here before it goes out. Pure.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace trainwatch {

// The length of the well-formed prefix of text: text.size() when all of it is.
size_t utf8_valid_prefix(std::string_view text);

inline bool is_valid_utf8(std::string_view text) { return utf8_valid_prefix(text) == text.size(); }

// text with each ill-formed sequence replaced by U+FFFD; text itself (no copy) when it
// is well formed, which is the usual case.
std::string utf8_repaired(std::string text);

}  // namespace trainwatch
