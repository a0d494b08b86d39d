#include "core/constant_time.h"

#include <gtest/gtest.h>

#include <string>

namespace trainwatch {
namespace {

TEST(ConstantTimeEqual, ComparesWholeStrings) {
  EXPECT_TRUE(constant_time_equal("abc", "abc"));
  EXPECT_TRUE(constant_time_equal("", ""));
  EXPECT_FALSE(constant_time_equal("abc", "abd"));
  EXPECT_FALSE(constant_time_equal("abc", "xbc"));
  EXPECT_FALSE(constant_time_equal("abc", "ab"));
  EXPECT_FALSE(constant_time_equal("ab", "abc"));
  EXPECT_FALSE(constant_time_equal("", "a"));
}

TEST(ConstantTimeEqual, ComparesBytesPastANul) {
  const std::string a("ab\0c", 4), b("ab\0d", 4);
  EXPECT_FALSE(constant_time_equal(a, b));
  EXPECT_TRUE(constant_time_equal(a, std::string("ab\0c", 4)));
}

}  // namespace
}  // namespace trainwatch
