// A standard five-field cron expression, parsed: "minute hour day-of-month month
// day-of-week", as crontab(5) writes it. Pure: no clock, no time zone (next_fire.h finds
// fire times in a zone).
//
// Each field is a comma-separated list of items; an item is `*`, a number, a range `a-b`,
// any of those with a step (`*/15`, `1-30/5`, `5/15` = 5 to the field's end by 15), or a
// name: JAN-DEC for months, SUN-SAT for days of the week (any case). Day of week 0 and 7
// are both Sunday. The macros @yearly (@annually), @monthly, @weekly, @daily (@midnight)
// and @hourly stand for their usual expressions.
//
// Day of month and day of week follow Vixie cron's rule: when both fields are restricted
// (neither starts with `*`), a day matches if either matches ("0 0 1,15 * MON" fires on
// the 1st, the 15th and every Monday); otherwise both must match, which, with one of them
// `*`, means the other alone decides. A field written `*/2` starts with `*` and so counts
// as unrestricted, as in Vixie cron and Healthchecks.
#pragma once

#include <bitset>
#include <string>
#include <string_view>

#include "core/result.h"

namespace trainwatch::cron {

struct Expression {
  std::bitset<60> minutes;           // 0-59
  std::bitset<24> hours;             // 0-23
  std::bitset<32> days;              // 1-31 (bit 0 unused)
  std::bitset<13> months;            // 1-12 (bit 0 unused)
  std::bitset<7> weekdays;           // 0-6, Sunday = 0
  bool days_restricted = false;      // the day-of-month field does not start with '*'
  bool weekdays_restricted = false;  // the day-of-week field does not start with '*'

  // Whether a calendar day (month 1-12, day 1-31, weekday 0-6 with Sunday 0) is one the
  // expression fires on, by the rule above.
  bool matches_day(int month, int day, int weekday) const;
};

// Parses `text`. The error's message names the field and says what was expected, for a
// person: "day of month 32 is out of range; expected 1-31". It does not judge whether the
// expression ever fires: never_fires() does.
Result<Expression> parse_expression(std::string_view text);

// Why an expression can never fire ("day 30 never occurs in February"), or "" when some
// day of some year matches it. February 29 counts: it occurs in leap years.
std::string never_fires(const Expression& e);

}  // namespace trainwatch::cron
