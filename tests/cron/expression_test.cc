// The five-field parser: what each field accepts, what it refuses and how it says so, and
// which expressions can never fire.
#include "cron/expression.h"

#include <gtest/gtest.h>

namespace trainwatch::cron {
namespace {

Expression parse(const char* text) {
  auto e = parse_expression(text);
  EXPECT_TRUE(e.ok()) << text << ": " << (e.ok() ? "" : e.error().message);
  return e.ok() ? *e : Expression{};
}

std::string error_of(const char* text) {
  auto e = parse_expression(text);
  EXPECT_FALSE(e.ok()) << text;
  return e.ok() ? "" : e.error().message;
}

template <size_t N>
std::vector<int> set_bits(const std::bitset<N>& bits) {
  std::vector<int> out;
  for (size_t i = 0; i < N; ++i) {
    if (bits[i]) out.push_back(static_cast<int>(i));
  }
  return out;
}

TEST(CronExpression, StarsSelectTheWholeField) {
  Expression e = parse("* * * * *");
  EXPECT_EQ(e.minutes.count(), 60u);
  EXPECT_EQ(e.hours.count(), 24u);
  EXPECT_EQ(set_bits(e.days).size(), 31u);
  EXPECT_EQ(set_bits(e.days).front(), 1);
  EXPECT_EQ(set_bits(e.months).size(), 12u);
  EXPECT_EQ(e.weekdays.count(), 7u);
  EXPECT_FALSE(e.days_restricted);
  EXPECT_FALSE(e.weekdays_restricted);
}

TEST(CronExpression, RangesStepsAndLists) {
  EXPECT_EQ(set_bits(parse("*/15 * * * *").minutes), (std::vector<int>{0, 15, 30, 45}));
  EXPECT_EQ(set_bits(parse("1-30/5 * * * *").minutes), (std::vector<int>{1, 6, 11, 16, 21, 26}));
  EXPECT_EQ(set_bits(parse("5/20 * * * *").minutes), (std::vector<int>{5, 25, 45}));
  EXPECT_EQ(set_bits(parse("0 8,12,18 * * *").hours), (std::vector<int>{8, 12, 18}));
  EXPECT_EQ(set_bits(parse("0 0-2,22-23 * * *").hours), (std::vector<int>{0, 1, 2, 22, 23}));
  EXPECT_EQ(set_bits(parse("0 0 */10 * *").days), (std::vector<int>{1, 11, 21, 31}));
  EXPECT_EQ(set_bits(parse("0 0 1 */3 *").months), (std::vector<int>{1, 4, 7, 10}));
  EXPECT_EQ(set_bits(parse("  0\t3  *  * *  ").hours), (std::vector<int>{3})) << "blanks separate fields";
}

TEST(CronExpression, MonthAndWeekdayNamesInAnyCase) {
  EXPECT_EQ(set_bits(parse("0 0 1 JAN,jul,Dec *").months), (std::vector<int>{1, 7, 12}));
  EXPECT_EQ(set_bits(parse("0 0 1 mar-MAY *").months), (std::vector<int>{3, 4, 5}));
  EXPECT_EQ(set_bits(parse("0 9 * * MON-FRI").weekdays), (std::vector<int>{1, 2, 3, 4, 5}));
  EXPECT_EQ(set_bits(parse("0 9 * * sun,SAT").weekdays), (std::vector<int>{0, 6}));
}

TEST(CronExpression, ZeroAndSevenAreBothSunday) {
  EXPECT_EQ(set_bits(parse("0 0 * * 7").weekdays), (std::vector<int>{0}));
  EXPECT_EQ(set_bits(parse("0 0 * * 0").weekdays), (std::vector<int>{0}));
  EXPECT_EQ(set_bits(parse("0 0 * * 5-7").weekdays), (std::vector<int>{0, 5, 6}));
  EXPECT_EQ(parse("0 0 * * 0-7").weekdays.count(), 7u);
}

TEST(CronExpression, MacrosStandForTheirExpressions) {
  const Expression daily = parse("@daily");
  EXPECT_EQ(set_bits(daily.minutes), (std::vector<int>{0}));
  EXPECT_EQ(set_bits(daily.hours), (std::vector<int>{0}));
  EXPECT_EQ(set_bits(parse("@hourly").minutes), (std::vector<int>{0}));
  EXPECT_EQ(parse("@hourly").hours.count(), 24u);
  EXPECT_EQ(set_bits(parse("@weekly").weekdays), (std::vector<int>{0}));
  EXPECT_EQ(set_bits(parse("@yearly").months), (std::vector<int>{1}));
  EXPECT_EQ(set_bits(parse("@monthly").days), (std::vector<int>{1}));
}

TEST(CronExpression, DayOfMonthOrDayOfWeekWhenBothAreRestricted) {
  // 2024-01-05 is a Friday, 2024-01-13 a Saturday, 2024-01-14 a Sunday.
  const Expression either = parse("0 0 13 * FRI");
  EXPECT_TRUE(either.matches_day(1, 5, 5)) << "a Friday that is not the 13th";
  EXPECT_TRUE(either.matches_day(1, 13, 6)) << "the 13th, a Saturday";
  EXPECT_FALSE(either.matches_day(1, 14, 0));

  const Expression weekday_only = parse("0 0 * * FRI");
  EXPECT_TRUE(weekday_only.matches_day(1, 5, 5));
  EXPECT_FALSE(weekday_only.matches_day(1, 13, 6));

  const Expression day_only = parse("0 0 13 * *");
  EXPECT_FALSE(day_only.matches_day(1, 5, 5));
  EXPECT_TRUE(day_only.matches_day(1, 13, 6));

  // A field that starts with '*' is unrestricted even with a step: both must match.
  const Expression stepped = parse("0 0 */2 * MON");
  EXPECT_FALSE(stepped.days_restricted);
  EXPECT_TRUE(stepped.matches_day(1, 1, 1)) << "the 1st, a Monday";
  EXPECT_FALSE(stepped.matches_day(1, 8, 1)) << "a Monday on an even day";
  EXPECT_FALSE(stepped.matches_day(1, 3, 3)) << "an odd day that is no Monday";

  EXPECT_FALSE(parse("0 0 13 FEB FRI").matches_day(1, 5, 5)) << "the month must match either way";
}

TEST(CronExpression, WrongFieldCountSaysWhatFiveFieldsAre) {
  EXPECT_EQ(error_of("0 3 * *"),
            "has 4 fields; expected 5: minute hour day-of-month month day-of-week, such as '0 3 * * *'");
  EXPECT_EQ(error_of("0 0 3 * * *").substr(0, 14), "has 6 fields; ");
  EXPECT_EQ(error_of("").substr(0, 14), "has 0 fields; ");
  EXPECT_EQ(
      error_of("@fortnightly"),
      "'@fortnightly' is not a macro; expected @yearly, @annually, @monthly, @weekly, @daily, @midnight "
      "or @hourly");
}

TEST(CronExpression, OutOfRangeValuesNameTheFieldAndItsRange) {
  EXPECT_EQ(error_of("60 * * * *"), "minute 60 is out of range; expected 0-59");
  EXPECT_EQ(error_of("0 24 * * *"), "hour 24 is out of range; expected 0-23");
  EXPECT_EQ(error_of("0 0 0 * *"), "day of month 0 is out of range; expected 1-31");
  EXPECT_EQ(error_of("0 0 32 * *"), "day of month 32 is out of range; expected 1-31");
  EXPECT_EQ(error_of("0 0 1 13 *"), "month 13 is out of range; expected 1-12 or JAN-DEC");
  EXPECT_EQ(error_of("0 0 * * 8"), "day of week 8 is out of range; expected 0-7 or SUN-SAT");
  EXPECT_EQ(error_of("0 0 * * 1-9"), "day of week 9 is out of range; expected 0-7 or SUN-SAT");
  EXPECT_EQ(error_of("99999 * * * *"), "minute '99999' is not a number; expected 0-59");
}

TEST(CronExpression, UnknownNamesAndGarbageAreRefused) {
  EXPECT_EQ(error_of("0 0 1 FOO *"), "month 'FOO' is not a number or a name; expected 1-12 or JAN-DEC");
  EXPECT_EQ(error_of("0 0 * * MOX"), "day of week 'MOX' is not a number or a name; expected 0-7 or SUN-SAT");
  EXPECT_EQ(error_of("0 0 * * MONDAY"),
            "day of week 'MONDAY' is not a number or a name; expected 0-7 or SUN-SAT");
  EXPECT_EQ(error_of("MON * * * *"), "minute 'MON' is not a number; expected 0-59");
  EXPECT_EQ(error_of("0 JAN * * *"), "hour 'JAN' is not a number; expected 0-23");
  EXPECT_EQ(error_of("-5 * * * *"), "minute '' is not a number; expected 0-59");
  EXPECT_EQ(error_of("1,,2 * * * *"),
            "minute has an empty list item; expected values separated by single commas");
  EXPECT_EQ(error_of("*-5 * * * *"), "minute '*' is not a number; expected 0-59");
}

TEST(CronExpression, StepsAndRangesMustMakeSense) {
  EXPECT_EQ(error_of("*/0 * * * *"), "minute step '0' in '*/0'; expected a step from 1 to 60");
  EXPECT_EQ(error_of("*/61 * * * *"), "minute step '61' in '*/61'; expected a step from 1 to 60");
  EXPECT_EQ(error_of("*/x * * * *"), "minute step 'x' in '*/x'; expected a step from 1 to 60");
  EXPECT_EQ(error_of("0 0 */ * *"), "day of month step '' in '*/'; expected a step from 1 to 31");
  EXPECT_EQ(error_of("30-10 * * * *"),
            "minute range '30-10' runs backwards; expected the smaller value first");
  EXPECT_EQ(error_of("0 0 * * FRI-MON"),
            "day of week range 'FRI-MON' runs backwards; expected the smaller value first");
}

TEST(CronExpression, NeverFiresWhenNoChosenDayExistsInTheChosenMonths) {
  EXPECT_EQ(never_fires(parse("0 0 30 2 *")), "day of month 30 never occurs in FEB");
  EXPECT_EQ(never_fires(parse("0 0 31 4,6,9,11 *")), "day of month 31 never occurs in APR,JUN,SEP,NOV");
  EXPECT_EQ(never_fires(parse("0 0 30,31 FEB */2")), "day of month 30,31 never occurs in FEB");
  EXPECT_EQ(never_fires(parse("0 0 29 2 *")), "") << "leap years have it";
  EXPECT_EQ(never_fires(parse("0 0 31 1-4 *")), "");
  EXPECT_EQ(never_fires(parse("0 0 30 2 MON")), "") << "either field: every Monday in February";
  EXPECT_EQ(never_fires(parse("* * * * *")), "");
}

}  // namespace
}  // namespace trainwatch::cron
