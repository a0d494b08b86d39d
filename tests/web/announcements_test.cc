#include "web/announcements.h"

#include <gtest/gtest.h>

#include "core/time_format.h"

namespace trainwatch::web {
namespace {

SystemTime at(const char* text) { return *parse_rfc3339(text); }

StatusPageAnnouncement window(const char* title, const char* from, const char* until) {
  return StatusPageAnnouncement{title, "", at(from), at(until), "info"};
}

TEST(Announcements, ShowFromTheirStartUntilJustBeforeTheirEnd) {
  const auto a = window("upgrade", "2026-05-01T02:00:00Z", "2026-05-01T04:00:00Z");
  EXPECT_FALSE(announcement_visible(a, at("2026-05-01T01:59:59.999Z")));
  EXPECT_TRUE(announcement_visible(a, at("2026-05-01T02:00:00Z")));
  EXPECT_TRUE(announcement_visible(a, at("2026-05-01T03:59:59.999Z")));
  EXPECT_FALSE(announcement_visible(a, at("2026-05-01T04:00:00Z")));
}

TEST(Announcements, OnlyThoseInTheirWindowShowInTheFilesOrder) {
  const std::vector<StatusPageAnnouncement> all = {
      window("past", "2026-04-01T00:00:00Z", "2026-04-02T00:00:00Z"),
      window("long", "2026-04-01T00:00:00Z", "2026-06-01T00:00:00Z"),
      window("future", "2026-05-02T00:00:00Z", "2026-05-03T00:00:00Z"),
      window("today", "2026-05-01T00:00:00Z", "2026-05-02T00:00:00Z"),
  };
  auto shown = visible_announcements(all, at("2026-05-01T12:00:00Z"));
  ASSERT_EQ(shown.size(), 2u);
  EXPECT_EQ(shown[0]->title, "long");
  EXPECT_EQ(shown[1]->title, "today");
  EXPECT_TRUE(visible_announcements(all, at("2026-07-01T00:00:00Z")).empty());
}

}  // namespace
}  // namespace trainwatch::web
