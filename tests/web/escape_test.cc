// Every text placed into a page reads as text: by hand (badges) and through templates.
#include <gtest/gtest.h>

#include "core/html_escape.h"
#include "web/badge.h"
#include "web/pages.h"

namespace trainwatch::web {
namespace {

constexpr const char* kXss = "<script>alert(1)</script>";

TEST(EscapeTest, EscapesTheFiveCharacters) {
  EXPECT_EQ(html_escape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
  EXPECT_EQ(html_escape("plain"), "plain");
}

TEST(EscapeTest, BadgeEscapesLabelAndValue) {
  std::string svg = render_badge(kXss, "x\"y", "#fff");
  EXPECT_EQ(svg.find("<script>"), std::string::npos);
  EXPECT_NE(svg.find("&lt;script&gt;"), std::string::npos);
  EXPECT_NE(svg.find("x&quot;y"), std::string::npos);
}

TEST(EscapeTest, StatusPageTemplateEscapesEveryText) {
  boost::json::object model;
  model["page_title"] = kXss;
  model["title"] = kXss;
  model["description"] = kXss;
  model["updated_at"] = "2026-01-01T00:00:00.000Z";
  model["banner"] = boost::json::object{{"code", "operational"}, {"text", "All systems operational"}};
  boost::json::object monitor{{"name", kXss},
                              {"status", "up"},
                              {"status_word", "Up"},
                              {"status_icon", "x"},
                              {"uptime_90d_text", "100.00%"},
                              {"days", boost::json::array()}};
  model["groups"] =
      boost::json::array{boost::json::object{{"name", kXss}, {"monitors", boost::json::array{monitor}}}};
  boost::json::object update{
      {"status", "identified"}, {"status_title", "Identified"}, {"at", "t"}, {"text", kXss}};
  boost::json::object incident{
      {"monitor", kXss}, {"cause", kXss},    {"started", "s"},      {"ended", nullptr},
      {"ongoing", true}, {"duration", "1m"}, {"has_updates", true}, {"updates", boost::json::array{update}}};
  model["announcements"] = boost::json::array{boost::json::object{
      {"title", kXss}, {"text", kXss}, {"severity", "warning"}, {"from", "f"}, {"until", "u"}}};
  model["incident_days"] =
      boost::json::array{boost::json::object{{"date", "d"}, {"incidents", boost::json::array{incident}}}};
  std::string page = render_page("status_page", model);
  EXPECT_NE(page.find("All systems operational"), std::string::npos);
  EXPECT_EQ(page.find("<script>"), std::string::npos) << page;
  EXPECT_NE(page.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(page.find("announcement-warning"), std::string::npos) << "the announcement is on the page";
  EXPECT_NE(page.find("Identified"), std::string::npos) << "the update is on the page";
}

// A rank's stack texts come from the ranks' processes (file and function names, and the
// native frames' symbols and modules): the job page shows them as text.
TEST(EscapeTest, JobPageStacksEscapePythonAndNativeFrames) {
  boost::json::object model;
  model["has_stacks"] = true;
  model["stacks"] =
      boost::json::array{boost::json::object{{"who", kXss},
                                             {"place", kXss},
                                             {"text", kXss},
                                             {"native_text", std::string("  ") + kXss + "  libc.so.6\n"}}};
  std::string page = render_page("part_job_live", model);
  EXPECT_NE(page.find("native frames"), std::string::npos) << page;
  EXPECT_EQ(page.find("<script>"), std::string::npos) << page;
  EXPECT_NE(page.find("&lt;script&gt;alert(1)&lt;/script&gt;  libc.so.6"), std::string::npos) << page;
}

}  // namespace
}  // namespace trainwatch::web
