#include "core/duration.h"

#include <gtest/gtest.h>

namespace trainwatch {
namespace {

TEST(ParseDuration, AcceptsEveryUnit) {
  EXPECT_EQ(parse_duration("500ms"), Millis(500));
  EXPECT_EQ(parse_duration("30s"), Millis(30'000));
  EXPECT_EQ(parse_duration("5m"), Millis(300'000));
  EXPECT_EQ(parse_duration("1h"), Millis(3'600'000));
  EXPECT_EQ(parse_duration("1d"), Millis(86'400'000));
  EXPECT_EQ(parse_duration("0s"), Millis(0));
}

TEST(ParseDuration, RejectsWhatIsNotOneNumberAndOneUnit) {
  for (const char* bad :
       {"", "s", "10", "10x", "-5s", "1.5s", "5 s", "5sec", "1m30s", "400d", "99999999999999999999s"}) {
    EXPECT_EQ(parse_duration(bad), std::nullopt) << bad;
  }
}

TEST(FormatDuration, ShowsTheTwoLargestUnits) {
  EXPECT_EQ(format_duration(Millis(0)), "0s");
  EXPECT_EQ(format_duration(Millis(750)), "750ms");
  EXPECT_EQ(format_duration(Millis(45'000)), "45s");
  EXPECT_EQ(format_duration(Millis(7'260'000)), "2h 1m");
  EXPECT_EQ(format_duration(Millis(3'600'000)), "1h");
  EXPECT_EQ(format_duration(Millis(3 * 86'400'000 + 4 * 3'600'000 + 5000)), "3d 4h");
}

TEST(FormatDuration, ConfigSpellingRoundTrips) {
  for (const char* text : {"500ms", "90s", "5m", "1h", "2d", "1500ms"}) {
    EXPECT_EQ(format_duration_config(*parse_duration(text)), text);
  }
}

}  // namespace
}  // namespace trainwatch
