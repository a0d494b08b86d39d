#include "web/time_text.h"

#include <chrono>
#include <cstdio>
#include <ctime>

#include "core/time_format.h"

namespace trainwatch::web {
namespace {

struct Unit {
  const char* one;
  const char* many;
  int64_t ms;
};
// Words for days; the others as their symbols, which read the same for one or many.
constexpr Unit kUnits[] = {
    {" day", " days", 86'400'000}, {" h", " h", 3'600'000}, {" min", " min", 60'000}, {" s", " s", 1'000}};

std::string count_of(int64_t n, const Unit& unit) {
  return std::to_string(n) + (n == 1 ? unit.one : unit.many);
}

}  // namespace

std::string duration_words(Millis d) {
  int64_t ms = d.count() < 0 ? -d.count() : d.count();
  if (ms < 1'000) return ms == 0 ? "0 s" : std::to_string(ms) + " ms";
  for (size_t i = 0; i < std::size(kUnits); ++i) {
    const int64_t n = ms / kUnits[i].ms;
    if (n == 0) continue;
    std::string out = count_of(n, kUnits[i]);
    // A second unit only where it says something: "2 h 5 min", never "12 days 3 h".
    if (i + 1 < std::size(kUnits) && n < 10) {
      const int64_t rest = (ms - n * kUnits[i].ms) / kUnits[i + 1].ms;
      if (rest != 0) out += " " + count_of(rest, kUnits[i + 1]);
    }
    return out;
  }
  return "0 s";
}

std::string ago_text(SystemTime t, SystemTime now) {
  const auto delta = std::chrono::duration_cast<Millis>(now - t);
  if (delta.count() > -5'000 && delta.count() < 5'000) return "just now";
  // Past a minute the seconds are noise: "3 min ago", not "3 min 12 s ago".
  Millis shown = delta.count() < 0 ? -delta : delta;
  if (shown >= Millis(60'000)) shown = Millis(shown.count() - shown.count() % 60'000);
  const std::string words = duration_words(shown);
  return delta.count() < 0 ? "in " + words : words + " ago";
}

std::string utc_text(SystemTime t) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(
      std::chrono::time_point_cast<std::chrono::system_clock::duration>(t));
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buffer[40];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buffer;
}

boost::json::object time_json(SystemTime t, SystemTime now) {
  Millis elapsed = std::chrono::duration_cast<Millis>(now - t);
  // A duration this coarse needs no seconds past a minute, as ago_text.
  if (elapsed >= Millis(60'000)) elapsed = Millis(elapsed.count() - elapsed.count() % 60'000);
  return boost::json::object{{"iso", format_rfc3339(t)},
                             {"ago", ago_text(t, now)},
                             {"for", duration_words(elapsed)},
                             {"utc", utc_text(t)}};
}

void add_time_fields(boost::json::object& row, std::initializer_list<const char*> keys, SystemTime now) {
  for (const char* key : keys) {
    const auto* value = row.if_contains(key);
    if (value == nullptr || !value->is_string()) continue;
    auto t = parse_rfc3339(value->as_string());
    if (!t) continue;
    row[std::string(key) + "_t"] = time_json(*t, now);
    row[std::string(key) + "_utc"] = utc_text(*t);
  }
}

std::string utc_text_of(std::string_view rfc3339) {
  auto t = parse_rfc3339(rfc3339);
  return t ? utc_text(*t) : std::string(rfc3339);
}

}  // namespace trainwatch::web
