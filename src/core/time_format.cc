#include "core/time_format.h"

#include <cstdio>
#include <ctime>

namespace trainwatch {

std::string format_rfc3339(SystemTime t) {
  const int64_t ms = to_unix_ms(t);
  const std::time_t seconds = static_cast<std::time_t>(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
  const int millis = static_cast<int>(ms - static_cast<int64_t>(seconds) * 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buffer[96];
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
  return buffer;
}

std::optional<SystemTime> parse_rfc3339(std::string_view text) {
  std::tm tm{};
  int millis = 0;
  char zone = 0;
  std::string copy(text);
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  int used = 0;
  if (std::sscanf(copy.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &year, &month, &day, &hour, &minute, &second,
                  &used) != 6) {
    return std::nullopt;
  }
  std::string_view rest = std::string_view(copy).substr(static_cast<size_t>(used));
  if (!rest.empty() && rest.front() == '.') {
    int digits = 0;
    size_t i = 1;
    for (; i < rest.size() && rest[i] >= '0' && rest[i] <= '9'; ++i) {
      if (digits < 3) millis = millis * 10 + (rest[i] - '0'), ++digits;
    }
    while (digits < 3) millis *= 10, ++digits;
    rest = rest.substr(i);
  }
  if (rest.size() != 1) return std::nullopt;
  zone = rest.front();
  if (zone != 'Z' && zone != 'z') return std::nullopt;
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60)
    return std::nullopt;
  // SystemTime counts nanoseconds in 64 bits: it holds 1677..2262 only, and a year outside
  // that overflows on conversion. Years before the epoch or past kMaxYear are no time
  // trainwatch has to deal with: they read as "not a time" (the caller's 400 or config error).
  constexpr int kMinYear = 1970, kMaxYear = 2199;
  if (year < kMinYear || year > kMaxYear) return std::nullopt;
  const std::time_t seconds = timegm(&tm);
  return from_unix_ms(static_cast<int64_t>(seconds) * 1000 + millis);
}

}  // namespace trainwatch
