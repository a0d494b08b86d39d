#include "core/duration.h"

#include <charconv>
#include <cstdint>

namespace trainwatch {
namespace {

struct Unit {
  std::string_view suffix;
  int64_t ms;
};
// Longest suffix first so "ms" is not read as "m" followed by garbage.
constexpr Unit kUnits[] = {{"ms", 1}, {"s", 1000}, {"m", 60'000}, {"h", 3'600'000}, {"d", 86'400'000}};
constexpr int64_t kMaxMs = 365LL * 86'400'000;

}  // namespace

std::optional<Millis> parse_duration(std::string_view text) {
  int64_t number = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc() || end == text.data() || number < 0) return std::nullopt;
  std::string_view suffix(end, text.data() + text.size() - end);
  for (const Unit& unit : kUnits) {
    if (suffix != unit.suffix) continue;
    if (number > kMaxMs / unit.ms) return std::nullopt;
    return Millis(number * unit.ms);
  }
  return std::nullopt;
}

std::string format_duration(Millis d) {
  int64_t ms = d.count();
  if (ms < 0) ms = -ms;
  if (ms < 1000) return ms == 0 ? "0s" : std::to_string(ms) + "ms";
  static constexpr struct {
    const char* name;
    int64_t ms;
  } kParts[] = {{"d", 86'400'000}, {"h", 3'600'000}, {"m", 60'000}, {"s", 1000}};
  std::string out;
  int shown = 0;
  for (const auto& part : kParts) {
    int64_t n = ms / part.ms;
    if (n == 0 && shown == 0) continue;
    ms -= n * part.ms;
    if (n != 0) {
      if (!out.empty()) out += ' ';
      out += std::to_string(n) + part.name;
    }
    if (++shown == 2) break;
  }
  return out;
}

std::string format_duration_config(Millis d) {
  int64_t ms = d.count();
  for (auto it = std::rbegin(kUnits); it != std::rend(kUnits); ++it) {
    if (ms != 0 && ms % it->ms == 0) return std::to_string(ms / it->ms) + std::string(it->suffix);
  }
  return std::to_string(ms) + "ms";
}

}  // namespace trainwatch
