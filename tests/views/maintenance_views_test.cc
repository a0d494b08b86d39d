#include "views/maintenance_views.h"

#include <gtest/gtest.h>

#include "core/time_format.h"

namespace trainwatch::views {
namespace {

using catalog::CatalogWindow;

TEST(WindowJson, ShowsTheFileSpellingAndWhetherItIsActive) {
  const SystemTime now = *parse_rfc3339("2026-05-03T00:30:00Z");  // a Sunday
  MaintenanceWindow daily;
  daily.tags = {"inference"};
  daily.recurring = true;
  daily.start_minute = 23 * 60;
  daily.length = Millis(2 * 3'600'000);  // 23:00 to 01:00
  auto o = window_json(CatalogWindow{"yaml-0", false, daily, std::nullopt}, now);
  EXPECT_EQ(o["daily"].as_string(), "23:00-01:00");
  EXPECT_EQ(o["source"].as_string(), "yaml");
  EXPECT_TRUE(o["active"].as_bool());
  EXPECT_EQ(o["active_until"].as_string(), "2026-05-03T01:00:00.000Z");
  EXPECT_FALSE(o.contains("created_at"));

  MaintenanceWindow weekly = daily;
  weekly.weekday = 6;  // sat 23:00-01:00
  EXPECT_EQ(window_json(CatalogWindow{"api-4", true, weekly, now}, now)["weekly"].as_string(),
            "sat 23:00-01:00");

  MaintenanceWindow once;
  once.monitors = {"rank0-health"};
  once.start = *parse_rfc3339("2026-05-01T02:00:00Z");
  once.end = *parse_rfc3339("2026-05-01T04:00:00Z");
  auto ended = window_json(CatalogWindow{"api-5", true, once, now}, now);
  EXPECT_FALSE(ended["active"].as_bool());
  EXPECT_TRUE(ended["ended"].as_bool());
  EXPECT_EQ(ended["start"].as_string(), "2026-05-01T02:00:00.000Z");
  EXPECT_EQ(ended["source"].as_string(), "api");
}

}  // namespace
}  // namespace trainwatch::views
