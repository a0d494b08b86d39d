#include "auth/form.h"

#include <gtest/gtest.h>

namespace trainwatch::auth {
namespace {

TEST(FormTest, DecodesUrlencodedBodies) {
  auto form = parse_form("token=a%2Bb+c&csrf=x&empty=&flag&bad=%zz");
  EXPECT_EQ(form["token"], "a+b c");
  EXPECT_EQ(form["csrf"], "x");
  EXPECT_EQ(form["empty"], "");
  EXPECT_EQ(form.count("flag"), 1u);
  EXPECT_EQ(form["bad"], "%zz");
}

TEST(FormTest, FindsOneCookie) {
  EXPECT_EQ(cookie_value("a=1; tw_session=abc; b=2", "tw_session"), "abc");
  EXPECT_EQ(cookie_value("tw_session_x=1", "tw_session"), "");
  EXPECT_EQ(cookie_value("", "tw_session"), "");
}

}  // namespace
}  // namespace trainwatch::auth
