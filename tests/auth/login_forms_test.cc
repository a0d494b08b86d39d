#include "auth/login_forms.h"

#include <gtest/gtest.h>

#include "fakes/manual_clock.h"

namespace trainwatch::auth {
namespace {

TEST(LoginFormsTest, AFormIsGoodForOnePostWithItsOwnToken) {
  testing::ManualClock clock;
  LoginForms forms(clock);
  auto a = forms.open();
  auto b = forms.open();
  ASSERT_TRUE(a && b);
  EXPECT_NE(a->id, b->id);
  EXPECT_FALSE(forms.redeem(a->id, b->csrf_token));  // another form's token
  EXPECT_FALSE(forms.redeem(a->id, a->csrf_token));  // the wrong try closed it
  EXPECT_TRUE(forms.redeem(b->id, b->csrf_token));
  EXPECT_FALSE(forms.redeem(b->id, b->csrf_token));  // used once already
  EXPECT_FALSE(forms.redeem("an-id-this-server-never-handed-out", a->csrf_token));
  EXPECT_FALSE(forms.redeem("", ""));
  EXPECT_EQ(forms.size(), 0u);
}

TEST(LoginFormsTest, FormsExpire) {
  testing::ManualClock clock;
  LoginForms forms(clock);
  auto a = forms.open();
  clock.advance(LoginForms::kFormTtl - Millis(1));
  auto b = forms.open();
  clock.advance(Millis(1));
  EXPECT_FALSE(forms.redeem(a->id, a->csrf_token));
  EXPECT_TRUE(forms.redeem(b->id, b->csrf_token));
}

}  // namespace
}  // namespace trainwatch::auth
