#include "cron/next_fire.h"

#include <cctz/civil_time.h>

namespace trainwatch::cron {
namespace {

// February 29 of a year divisible by 100 but not 400 is skipped, so the rarest day an
// expression can need ("0 0 29 2 *" after 2096) is eight years away; nine bound it.
constexpr int kMaxDaysSearched = 9 * 366;

int cron_weekday(const cctz::civil_day& d) {
  // cctz counts Monday as 0; cron counts Sunday as 0.
  return (static_cast<int>(cctz::get_weekday(d)) + 1) % 7;
}

}  // namespace

std::optional<SystemTime> next_fire(const Expression& e, const cctz::time_zone& zone, SystemTime after) {
  const auto after_s = std::chrono::floor<std::chrono::seconds>(after);
  // Fire times are whole minutes: the first candidate is the local minute after `after`'s.
  const cctz::civil_minute first = cctz::civil_minute(cctz::convert(after_s, zone)) + 1;
  cctz::civil_day day(first);
  for (int searched = 0; searched < kMaxDaysSearched; ++searched, day += 1) {
    if (!e.months[static_cast<size_t>(day.month())]) {
      // Straight to the first of the next month (a month is at most 31 days of the bound).
      const cctz::civil_month next_month = cctz::civil_month(day) + 1;
      searched += static_cast<int>(cctz::civil_day(next_month) - day) - 1;
      day = cctz::civil_day(next_month) - 1;
      continue;
    }
    if (!e.matches_day(day.month(), day.day(), cron_weekday(day))) continue;
    const bool first_day = day == cctz::civil_day(first);
    for (int h = first_day ? first.hour() : 0; h < 24; ++h) {
      if (!e.hours[static_cast<size_t>(h)]) continue;
      const int from_minute = first_day && h == first.hour() ? first.minute() : 0;
      for (int m = from_minute; m < 60; ++m) {
        if (!e.minutes[static_cast<size_t>(m)]) continue;
        // SKIPPED: the transition instant; REPEATED: the first occurrence (see next_fire.h).
        const cctz::civil_second local(day.year(), day.month(), day.day(), h, m, 0);
        const auto at = cctz::convert(local, zone);
        // Inside a repeated hour, a local time after `after`'s may be an earlier instant.
        if (at > after) return SystemTime(at);
      }
    }
  }
  return std::nullopt;
}

}  // namespace trainwatch::cron
