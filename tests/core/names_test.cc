#include "core/names.h"

#include <gtest/gtest.h>

#include <string>

namespace trainwatch {
namespace {

TEST(Names, AcceptsLowerCaseLettersDigitsAndDotUnderscoreDash) {
  EXPECT_TRUE(valid_name("a"));
  EXPECT_TRUE(valid_name("llama-7b_run.2"));
  EXPECT_TRUE(valid_name("0"));
  EXPECT_TRUE(valid_name(std::string(kMaxNameLength, 'x')));
  EXPECT_EQ(name_problem("llama-7b"), "");
}

TEST(Names, RefusesOtherCharactersAndSaysWhatIsExpected) {
  for (const char* bad : {"", "A", "MyJob", "a b", "a/b", "a:b", "caf\xc3\xa9", "a\n"}) {
    EXPECT_FALSE(valid_name(bad)) << bad;
    EXPECT_EQ(name_problem(bad), "expected lower-case letters, digits, '.', '_' or '-'") << bad;
  }
}

TEST(Names, RefusesTooLongAndLeadingDot) {
  EXPECT_EQ(name_problem(std::string(kMaxNameLength + 1, 'x')), "expected at most 63 characters, not 64");
  // "." and ".." would name a directory, not a job's own.
  for (const char* bad : {".", "..", ".hidden"}) {
    EXPECT_EQ(name_problem(bad), "expected a name that does not start with '.'") << bad;
  }
  EXPECT_TRUE(valid_name("a.."));
}

}  // namespace
}  // namespace trainwatch
