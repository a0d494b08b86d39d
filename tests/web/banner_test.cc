#include "web/banner.h"

#include <gtest/gtest.h>

#include <vector>

namespace trainwatch::web {
namespace {

using S = MonitorStatus;

Banner banner_of(std::vector<BannerInput> in) { return overall_banner(in); }

TEST(BannerTest, AllUpIsOperational) {
  EXPECT_EQ(banner_of({{S::kUp, 0}, {S::kUp, 0}}), Banner::kOperational);
}

TEST(BannerTest, OneOfSeveralDownIsPartial) {
  EXPECT_EQ(banner_of({{S::kUp, 0}, {S::kDown, 3}}), Banner::kPartialOutage);
}

TEST(BannerTest, EveryActiveMonitorDownIsMajor) {
  EXPECT_EQ(banner_of({{S::kDown, 2}, {S::kDown, 2}, {S::kPaused, 0}}), Banner::kMajorOutage);
}

TEST(BannerTest, FailingButNotYetDownIsDegraded) {
  EXPECT_EQ(banner_of({{S::kUp, 1}, {S::kUp, 0}}), Banner::kDegraded);
  EXPECT_EQ(banner_of({{S::kPending, 1}}), Banner::kDegraded);
}

TEST(BannerTest, PausedAndEmptyPagesReadOperational) {
  EXPECT_EQ(banner_of({}), Banner::kOperational);
  EXPECT_EQ(banner_of({{S::kPaused, 0}}), Banner::kOperational);
  EXPECT_EQ(banner_of({{S::kPending, 0}}), Banner::kOperational);
}

TEST(BannerTest, WordsAndCodesAgree) {
  EXPECT_EQ(banner_text(Banner::kMajorOutage), "Major outage");
  EXPECT_EQ(banner_code(Banner::kPartialOutage), "partial_outage");
  EXPECT_EQ(status_word(S::kDown), "Down");
  EXPECT_FALSE(status_icon(S::kUp).empty());
}

}  // namespace
}  // namespace trainwatch::web
