#include "cron/expression.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <vector>

namespace trainwatch::cron {
namespace {

constexpr std::array<const char*, 12> kMonthNames = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                                     "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
constexpr std::array<const char*, 7> kWeekdayNames = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

// One of the five fields: its name in messages, its range, and the names it accepts.
struct Field {
  const char* name;
  int min;
  int max;
  const char* const* names;  // names[i] stands for names_first + i; nullptr: numbers only
  size_t name_count;
  int names_first;
  const char* expected;  // what a value may be, for messages
};

constexpr Field kMinute{"minute", 0, 59, nullptr, 0, 0, "0-59"};
constexpr Field kHour{"hour", 0, 23, nullptr, 0, 0, "0-23"};
constexpr Field kDay{"day of month", 1, 31, nullptr, 0, 0, "1-31"};
constexpr Field kMonth{"month", 1, 12, kMonthNames.data(), kMonthNames.size(), 1, "1-12 or JAN-DEC"};
// 7 is Sunday too; it is folded onto 0 when the bits are set.
constexpr Field kWeekday{"day of week",   0, 7, kWeekdayNames.data(), kWeekdayNames.size(), 0,
                         "0-7 or SUN-SAT"};

Error bad(std::string message) { return make_error("cron.invalid", std::move(message)); }

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// A value of `field`: a number or one of its names. Range is checked by the caller.
Result<int> parse_value(const Field& field, std::string_view text) {
  if (!text.empty() && text.size() <= 4 &&
      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    int v = 0;
    for (char c : text) v = v * 10 + (c - '0');
    if (v < field.min || v > field.max) {
      return bad(std::string(field.name) + " " + std::string(text) + " is out of range; expected " +
                 field.expected);
    }
    return v;
  }
  const std::string name = upper(text);
  for (size_t i = 0; i < field.name_count; ++i) {
    if (name == field.names[i]) return field.names_first + static_cast<int>(i);
  }
  return bad(std::string(field.name) + " '" + std::string(text) + "' is not " +
             (field.names != nullptr ? "a number or a name" : "a number") + "; expected " + field.expected);
}

// Sets the bits one list item selects: `*`, `a`, `a-b`, each optionally `/step`.
Result<Ok> parse_item(const Field& field, std::string_view item, std::vector<int>& out) {
  if (item.empty()) {
    return bad(std::string(field.name) +
               " has an empty list item; expected values separated by single commas");
  }
  std::string_view base = item;
  int step = 1;
  bool stepped = false;
  if (size_t slash = item.find('/'); slash != std::string_view::npos) {
    base = item.substr(0, slash);
    std::string_view step_text = item.substr(slash + 1);
    const int span = field.max - field.min + 1;
    const bool digits =
        !step_text.empty() && step_text.size() <= 4 &&
        std::all_of(step_text.begin(), step_text.end(), [](char c) { return c >= '0' && c <= '9'; });
    step = 0;
    if (digits) {
      for (char c : step_text) step = step * 10 + (c - '0');
    }
    if (step < 1 || step > span) {
      return bad(std::string(field.name) + " step '" + std::string(step_text) + "' in '" + std::string(item) +
                 "'; expected a step from 1 to " + std::to_string(span));
    }
    stepped = true;
  }
  int first = field.min;
  int last = field.max;
  if (base != "*") {
    size_t dash = base.find('-');
    auto a = parse_value(field, base.substr(0, dash));
    if (!a) return a.error();
    first = *a;
    if (dash != std::string_view::npos) {
      auto b = parse_value(field, base.substr(dash + 1));
      if (!b) return b.error();
      last = *b;
      if (last < first) {
        return bad(std::string(field.name) + " range '" + std::string(base) +
                   "' runs backwards; expected the smaller value first");
      }
    } else if (!stepped) {
      last = first;  // a single value; "5/15" runs to the field's end
    }
  }
  for (int v = first; v <= last; v += step) out.push_back(v);
  return Ok{};
}

template <size_t N>
Result<Ok> parse_field(const Field& field, std::string_view text, std::bitset<N>& bits) {
  std::vector<int> values;
  size_t start = 0;
  for (;;) {
    size_t comma = text.find(',', start);
    auto item = text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (auto r = parse_item(field, item, values); !r) return r.error();
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  for (int v : values) bits.set(static_cast<size_t>(v % static_cast<int>(N)));
  return Ok{};
}

std::vector<std::string_view> split_fields(std::string_view text) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t') ++i;
    if (i > start) fields.push_back(text.substr(start, i - start));
  }
  return fields;
}

// The macros' meaning, as crontab(5) gives it.
std::string_view expand_macro(std::string_view text) {
  if (text == "@yearly" || text == "@annually") return "0 0 1 1 *";
  if (text == "@monthly") return "0 0 1 * *";
  if (text == "@weekly") return "0 0 * * 0";
  if (text == "@daily" || text == "@midnight") return "0 0 * * *";
  if (text == "@hourly") return "0 * * * *";
  return {};
}

int days_in_month_of_leap_year(int month) {
  constexpr std::array<int, 13> kDays = {0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return kDays[static_cast<size_t>(month)];
}

}  // namespace

bool Expression::matches_day(int month, int day, int weekday) const {
  if (!months[static_cast<size_t>(month)]) return false;
  const bool by_day = days[static_cast<size_t>(day)];
  const bool by_weekday = weekdays[static_cast<size_t>(weekday)];
  if (days_restricted && weekdays_restricted) return by_day || by_weekday;
  return by_day && by_weekday;
}

Result<Expression> parse_expression(std::string_view text) {
  std::vector<std::string_view> fields = split_fields(text);
  if (fields.size() == 1 && fields[0].starts_with('@')) {
    std::string_view expanded = expand_macro(fields[0]);
    if (expanded.empty()) {
      return bad("'" + std::string(fields[0]) +
                 "' is not a macro; expected @yearly, @annually, @monthly, @weekly, @daily, @midnight or "
                 "@hourly");
    }
    fields = split_fields(expanded);
  }
  if (fields.size() != 5) {
    return bad("has " + std::to_string(fields.size()) + (fields.size() == 1 ? " field" : " fields") +
               "; expected 5: minute hour day-of-month month day-of-week, such as '0 3 * * *'");
  }
  Expression e;
  if (auto r = parse_field(kMinute, fields[0], e.minutes); !r) return r.error();
  if (auto r = parse_field(kHour, fields[1], e.hours); !r) return r.error();
  if (auto r = parse_field(kDay, fields[2], e.days); !r) return r.error();
  if (auto r = parse_field(kMonth, fields[3], e.months); !r) return r.error();
  if (auto r = parse_field(kWeekday, fields[4], e.weekdays); !r) return r.error();
  e.days_restricted = !fields[2].starts_with('*');
  e.weekdays_restricted = !fields[4].starts_with('*');
  return e;
}

std::string never_fires(const Expression& e) {
  // With both day fields restricted a day matches on its weekday alone, and every month
  // has every weekday. Otherwise a day must match its day of month, and over the years
  // every valid (month, day) falls on every weekday: the question is whether one exists.
  if (e.days_restricted && e.weekdays_restricted) return "";
  std::string days, months;
  for (int m = 1; m <= 12; ++m) {
    if (!e.months[static_cast<size_t>(m)]) continue;
    for (int d = 1; d <= days_in_month_of_leap_year(m); ++d) {
      if (e.days[static_cast<size_t>(d)]) return "";
    }
    months += (months.empty() ? "" : ",") + std::string(kMonthNames[static_cast<size_t>(m - 1)]);
  }
  for (int d = 1; d <= 31; ++d) {
    if (e.days[static_cast<size_t>(d)]) days += (days.empty() ? "" : ",") + std::to_string(d);
  }
  return "day of month " + days + " never occurs in " + months;
}

}  // namespace trainwatch::cron
