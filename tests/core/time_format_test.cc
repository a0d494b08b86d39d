#include "core/time_format.h"

#include <gtest/gtest.h>

namespace trainwatch {
namespace {

TEST(Rfc3339, FormatsUtcWithMilliseconds) {
  EXPECT_EQ(format_rfc3339(from_unix_ms(0)), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(format_rfc3339(from_unix_ms(1'795'945'267'250)), "2026-11-29T09:41:07.250Z");
}

TEST(Rfc3339, ParsesWhatItFormatsAndPlainSeconds) {
  EXPECT_EQ(parse_rfc3339("2026-11-29T09:41:07.250Z"), from_unix_ms(1'795'945'267'250));
  EXPECT_EQ(parse_rfc3339("2026-11-29T09:41:07Z"), from_unix_ms(1'795'945'267'000));
}

TEST(Rfc3339, RejectsOtherZonesAndGarbage) {
  for (const char* bad :
       {"", "yesterday", "2026-11-29", "2026-11-29T09:41:07+01:00", "2026-13-29T09:41:07Z"}) {
    EXPECT_EQ(parse_rfc3339(bad), std::nullopt) << bad;
  }
}

// A maintenance window starting in 1013 once overflowed the conversion to SystemTime.
TEST(Rfc3339, RejectsYearsBeforeTheEpochOrPast2199) {
  for (const char* far :
       {"1013-05-01T02:00:00Z", "1969-12-31T23:59:59Z", "2200-01-01T00:00:00Z", "9999-12-31T23:59:59Z"}) {
    EXPECT_EQ(parse_rfc3339(far), std::nullopt) << far;
  }
  EXPECT_EQ(parse_rfc3339("1970-01-01T00:00:00Z"), from_unix_ms(0));
  EXPECT_NE(parse_rfc3339("2199-12-31T23:59:59Z"), std::nullopt);
}

}  // namespace
}  // namespace trainwatch
