#include "core/json_text.h"

#include <gtest/gtest.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include <boost/json/parse.hpp>

namespace trainwatch {
namespace {

namespace json = boost::json;

double read_back(const std::string& text) {
  double out = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  EXPECT_EQ(ec, std::errc()) << text;
  EXPECT_EQ(end, text.data() + text.size()) << text;
  return out;
}

TEST(JsonNumber, PrintsWhatBoostPrintedInExponentFormAsPlainDecimals) {
  EXPECT_EQ(json_number(4.202054724618367), "4.202054724618367");
  EXPECT_EQ(json_number(507.53665331578947), "507.53665331578947");
  EXPECT_EQ(json_number(0.25), "0.25");
  EXPECT_EQ(json_number(-12.5), "-12.5");
  EXPECT_EQ(json_number(0.1), "0.1");
  EXPECT_EQ(json_number(0.000001), "0.000001");
}

TEST(JsonNumber, UsesExponentFormOnlyBelowOneMillionthAndFromTenToTheTwentyFirst) {
  EXPECT_EQ(json_number(1e-7), "1e-07");
  EXPECT_EQ(json_number(-2.5e-9), "-2.5e-09");
  EXPECT_EQ(json_number(5e-324), "5e-324");
  EXPECT_EQ(json_number(1e21), "1e+21");
  EXPECT_EQ(json_number(1.5e300), "1.5e+300");
  EXPECT_EQ(json_number(std::numeric_limits<double>::max()), "1.7976931348623157e+308");
  EXPECT_EQ(json_number(1e20), "100000000000000000000.0");
}

TEST(JsonNumber, WholeDoublesStayDoublesAndNegativeZeroKeepsItsSign) {
  EXPECT_EQ(json_number(5.0), "5.0");
  EXPECT_EQ(json_number(-3.0), "-3.0");
  EXPECT_EQ(json_number(0.0), "0.0");
  EXPECT_EQ(json_number(-0.0), "-0.0");
  EXPECT_TRUE(std::signbit(read_back(json_number(-0.0))));
  EXPECT_TRUE(json::parse(json_number(5.0)).is_double());
}

TEST(JsonNumber, NonFiniteNumbersAreNull) {
  EXPECT_EQ(json_number(std::numeric_limits<double>::quiet_NaN()), "null");
  EXPECT_EQ(json_number(std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(json_number(-std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(json_text(json::array{1.0, std::numeric_limits<double>::infinity()}), "[1.0,null]");
}

// Every finite double, drawn as a random bit pattern (so every exponent is as likely),
// reads back to exactly the same double, and is valid JSON holding a double.
TEST(JsonNumber, EveryDoubleReadsBackExactlyAsTheSameDouble) {
  std::mt19937_64 random(20260501);
  int checked = 0;
  for (int i = 0; i < 200'000; ++i) {
    const auto bits = random();
    const double value = std::bit_cast<double>(bits);
    if (!std::isfinite(value)) continue;
    const std::string text = json_number(value);
    ASSERT_EQ(std::bit_cast<uint64_t>(read_back(text)), bits) << text;
    const double magnitude = std::fabs(value);
    const bool plain = magnitude == 0 || (magnitude >= 1e-6 && magnitude < 1e21);
    ASSERT_EQ(text.find('e') == std::string::npos, plain) << text;
    if (i % 100 == 0) {
      boost::system::error_code ec;
      const json::value parsed = json::parse(text, ec);
      ASSERT_FALSE(ec) << text;
      ASSERT_TRUE(parsed.is_double()) << text;
    }
    ++checked;
  }
  EXPECT_GT(checked, 190'000);
}

// Doubles people see most (latencies, rates, fractions): short and exact in plain form.
TEST(JsonNumber, EverydayValuesAreShortAndPlain) {
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> ms(0.0, 10'000.0);
  for (int i = 0; i < 10'000; ++i) {
    const double value = ms(random);
    const std::string text = json_number(value);
    ASSERT_EQ(read_back(text), value) << text;
    ASSERT_EQ(text.find_first_of("eE"), std::string::npos) << text;
    ASSERT_LE(text.size(), 22u) << text;
  }
}

TEST(JsonText, WritesIntegersAsIntegersAndKeepsTheShapeOfTheValue) {
  const json::value v = {{"name", "rank0"},
                         {"count", 42},
                         {"big", std::numeric_limits<uint64_t>::max()},
                         {"min", std::numeric_limits<int64_t>::min()},
                         {"ok", true},
                         {"none", nullptr},
                         {"latency_ms", 12.5},
                         {"list", json::array{1, 2.0, "x", json::object{}}}};
  EXPECT_EQ(json_text(v),
            "{\"name\":\"rank0\",\"count\":42,\"big\":18446744073709551615,\"min\":-9223372036854775808,"
            "\"ok\":true,\"none\":null,\"latency_ms\":12.5,\"list\":[1,2.0,\"x\",{}]}");
  EXPECT_EQ(json::parse(json_text(v)), v);
  EXPECT_EQ(json_text(v.as_object()), json_text(v));
  EXPECT_EQ(json_text(json::array{}), "[]");
}

TEST(JsonText, EscapesWhatJsonRequiresAndPassesOtherTextThrough) {
  const std::string text = std::string("a\"b\\c\n\t\r\b\f") + '\x01' + '\x1f' + "/é≥✓";
  const std::string written = json_text(json::value(text));
  EXPECT_EQ(written, "\"a\\\"b\\\\c\\n\\t\\r\\b\\f\\u0001\\u001f/é≥✓\"");
  EXPECT_EQ(json::parse(written).as_string(), text);
  EXPECT_EQ(json_text(json::object{{"k\"ey", 1}}), "{\"k\\\"ey\":1}");
  EXPECT_EQ(json_text(json::value(std::string("nul\0x", 5))), "\"nul\\u0000x\"");
}

}  // namespace
}  // namespace trainwatch
