#include "core/utf8.h"

#include <cstdint>

namespace trainwatch {
namespace {

// The length of the well-formed sequence at text[i], 0 when there is none.
size_t sequence_at(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  const uint8_t b0 = byte(i);
  if (b0 < 0x80) return 1;
  size_t len = 0;
  uint8_t lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0) lo = 0xA0;  // overlong
    if (b0 == 0xED) hi = 0x9F;  // surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0) lo = 0x90;  // overlong
    if (b0 == 0xF4) hi = 0x8F;  // past U+10FFFF
  } else {
    return 0;
  }
  if (i + len > text.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < len; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return len;
}

}  // namespace

size_t utf8_valid_prefix(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const size_t len = sequence_at(text, i);
    if (len == 0) return i;
    i += len;
  }
  return i;
}

std::string utf8_repaired(std::string text) {
  size_t first_bad = utf8_valid_prefix(text);
  if (first_bad == text.size()) return text;
  std::string out(text, 0, first_bad);
  out.reserve(text.size() + 16);
  size_t i = first_bad;
  while (i < text.size()) {
    const size_t len = sequence_at(text, i);
    if (len == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD for this byte, then resynchronise at the next one
      ++i;
    } else {
      out.append(text, i, len);
      i += len;
    }
  }
  return out;
}

}  // namespace trainwatch
