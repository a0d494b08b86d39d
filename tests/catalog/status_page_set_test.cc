#include "catalog/status_page_set.h"

#include <gtest/gtest.h>

namespace trainwatch::catalog {
namespace {

StatusPageConfig page(std::string slug, std::string title) {
  StatusPageConfig p;
  p.slug = std::move(slug);
  p.title = std::move(title);
  return p;
}

TEST(StatusPageSet, FindsAPageBySlugAndNothingForAnUnknownOne) {
  StatusPageSet pages({page("public", "Public"), page("research", "Research")});
  auto found = pages.find("research");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->title, "Research");
  EXPECT_EQ(pages.find("nosuch"), nullptr);
}

TEST(StatusPageSet, AFoundPageOutlivesTheReloadThatReplacesItsSet) {
  StatusPageSet pages({page("public", "Before")});
  auto held = pages.find("public");
  pages.set({page("public", "After")});
  EXPECT_EQ(held->title, "Before");  // a request under way reads the set it started with
  EXPECT_EQ(pages.find("public")->title, "After");
}

}  // namespace
}  // namespace trainwatch::catalog
