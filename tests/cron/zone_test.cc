// Zones by tz database name, and how times read in them.
#include "cron/zone.h"

#include <gtest/gtest.h>

#include "core/time_format.h"

namespace trainwatch::cron {
namespace {

TEST(CronZone, LoadsNamesOfTheTzDatabase) {
  for (const char* name :
       {"UTC", "Europe/Berlin", "America/New_York", "America/Argentina/Buenos_Aires", "Etc/GMT+5"}) {
    EXPECT_TRUE(load_zone(name).ok()) << name;
  }
}

TEST(CronZone, RefusesUnknownNamesAndPaths) {
  for (const char* name : {"", "Europe/Berln", "Mars/Olympus", "../../etc/passwd", "/etc/localtime",
                           "Europe//Berlin", "Europe/Berlin/", "Europe/Berlin ", "Europe\\Berlin"}) {
    auto zone = load_zone(name);
    ASSERT_FALSE(zone.ok()) << name;
    EXPECT_EQ(zone.error().message, "'" + std::string(name) + "' is not in the tz database");
  }
}

TEST(CronZone, FormatsWallTimesWithTheZonesAbbreviation) {
  const auto berlin = load_zone("Europe/Berlin");
  ASSERT_TRUE(berlin.ok());
  EXPECT_EQ(format_local(*parse_rfc3339("2024-03-31T01:00:00Z"), *berlin), "2024-03-31 03:00 CEST");
  EXPECT_EQ(format_local(*parse_rfc3339("2024-01-05T08:30:59Z"), *berlin), "2024-01-05 09:30 CET");
  EXPECT_EQ(format_local(*parse_rfc3339("2024-01-05T08:30:00Z"), cctz::utc_time_zone()),
            "2024-01-05 08:30 UTC");
}

}  // namespace
}  // namespace trainwatch::cron
