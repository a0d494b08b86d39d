#include "web/time_text.h"

#include <gtest/gtest.h>

#include "core/time_format.h"
#include "web/heartbeat_due.h"

namespace trainwatch::web {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

const SystemTime kNow = *parse_rfc3339("2026-12-06T04:45:48.491Z");

TEST(TimeText, DurationsInWordsKeepTwoUnitsWhileTheFirstIsSmall) {
  EXPECT_EQ(duration_words(Millis(0)), "0 s");
  EXPECT_EQ(duration_words(Millis(250)), "250 ms");
  EXPECT_EQ(duration_words(seconds(45)), "45 s");
  EXPECT_EQ(duration_words(minutes(3)), "3 min");
  EXPECT_EQ(duration_words(minutes(3) + seconds(12)), "3 min 12 s");
  EXPECT_EQ(duration_words(hours(2) + minutes(5)), "2 h 5 min");
  EXPECT_EQ(duration_words(hours(28)), "1 day 4 h");
  EXPECT_EQ(duration_words(hours(24 * 12 + 3)), "12 days");
  EXPECT_EQ(duration_words(-minutes(3)), "3 min");
}

TEST(TimeText, RelativeTimesReadAsPeopleSayThem) {
  EXPECT_EQ(ago_text(kNow - seconds(2), kNow), "just now");
  EXPECT_EQ(ago_text(kNow - seconds(45), kNow), "45 s ago");
  EXPECT_EQ(ago_text(kNow - minutes(3) - seconds(12), kNow), "3 min ago");
  EXPECT_EQ(ago_text(kNow - hours(2) - minutes(5), kNow), "2 h 5 min ago");
  EXPECT_EQ(ago_text(kNow + minutes(3), kNow), "in 3 min");
}

TEST(TimeText, TheExactTimeIsUtcWithoutIsoPunctuation) {
  EXPECT_EQ(utc_text(kNow), "2026-12-06 04:45:48 UTC");
  const auto t = time_json(kNow - minutes(3), kNow);
  EXPECT_EQ(t.at("iso"), "2026-12-06T04:42:48.491Z");
  EXPECT_EQ(t.at("ago"), "3 min ago");
  EXPECT_EQ(t.at("for"), "3 min");
  EXPECT_EQ(t.at("utc"), "2026-12-06 04:42:48 UTC");
  boost::json::object row{{"created", "2026-12-06T04:42:48.491Z"}, {"name", "x"}};
  add_time_fields(row, {"created", "name", "absent"}, kNow);
  EXPECT_EQ(row.at("created_utc"), "2026-12-06 04:42:48 UTC");
  EXPECT_FALSE(row.contains("name_t"));
}

PingRecord ping(SystemTime at, PingKind kind = PingKind::kSuccess) {
  PingRecord p;
  p.ping.at = at;
  p.ping.kind = kind;
  return p;
}

TEST(PingTimings, EachFinishSaysWhetherItCameWhenExpected) {
  // Newest first; period 10 min, grace 5 min.
  const std::vector<PingRecord> log = {ping(kNow), ping(kNow - minutes(27)),
                                       ping(kNow - minutes(30), PingKind::kStart), ping(kNow - minutes(40)),
                                       ping(kNow - minutes(49))};
  const auto t = ping_timings(log, minutes(10), minutes(5));
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t[0].text, "17 min late: past grace");
  EXPECT_TRUE(t[0].missed);
  EXPECT_EQ(t[1].text, "3 min late, within grace");
  EXPECT_TRUE(t[1].late && !t[1].missed);
  EXPECT_EQ(t[2].text, "");  // a start has no verdict
  EXPECT_EQ(t[3].text, "on time");
  EXPECT_EQ(t[4].text, "");  // nothing before it
  EXPECT_EQ(ping_timings(log, std::nullopt, minutes(5))[0].text, "27 min after the one before");
}

}  // namespace
}  // namespace trainwatch::web
