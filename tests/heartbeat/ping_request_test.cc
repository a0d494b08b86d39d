#include "heartbeat/ping_request.h"

#include <gtest/gtest.h>

namespace trainwatch::heartbeat {
namespace {

TEST(ParsePingAction, HealthchecksSuffixes) {
  EXPECT_EQ(parse_ping_action("")->kind, PingKind::kSuccess);
  EXPECT_EQ(parse_ping_action("start")->kind, PingKind::kStart);
  EXPECT_EQ(parse_ping_action("fail")->kind, PingKind::kFail);
  EXPECT_EQ(parse_ping_action("log")->kind, PingKind::kLog);
  auto zero = parse_ping_action("0");
  EXPECT_EQ(zero->kind, PingKind::kExitCode);
  EXPECT_EQ(zero->exit_code, 0);
  EXPECT_EQ(parse_ping_action("255")->exit_code, 255);
  EXPECT_EQ(parse_ping_action("007")->exit_code, 7);
}

TEST(ParsePingAction, EverythingElseIsABadRequest) {
  for (const char* bad : {"256", "-1", "1000", "99999999999999999999", "abc", "start/x", "1.5", " 1"}) {
    auto action = parse_ping_action(bad);
    ASSERT_FALSE(action) << bad;
    EXPECT_EQ(action.error().code, "ping.bad_action");
  }
}

TEST(ParsePushStatus, UpOrAbsentIsASuccessDownAFail) {
  EXPECT_EQ(parse_push_status(std::nullopt)->kind, PingKind::kSuccess);
  EXPECT_EQ(parse_push_status(std::string("up"))->kind, PingKind::kSuccess);
  EXPECT_EQ(parse_push_status(std::string("down"))->kind, PingKind::kFail);
  EXPECT_FALSE(parse_push_status(std::string("sideways")));
}

TEST(KeepBody, CutsAtTheLimitOnACharacterBoundary) {
  auto whole = keep_body("hello", 10);
  EXPECT_EQ(whole.text, "hello");
  EXPECT_FALSE(whole.truncated);
  auto cut = keep_body("héllo", 2);  // 'h' fits, 'é' (2 bytes) does not
  EXPECT_EQ(cut.text, "h");
  EXPECT_TRUE(cut.truncated);
  EXPECT_EQ(keep_body(std::string(20'000, 'x'), 10 * 1024).text.size(), 10u * 1024);
}

TEST(KeepBody, InvalidUtf8BecomesTheReplacementCharacter) {
  auto kept = keep_body(std::string("a\xff"
                                    "b\xc3",
                                    4),
                        100);
  EXPECT_EQ(kept.text,
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD");
  EXPECT_EQ(keep_body("\xED\xA0\x80", 100).text.size(), 9u) << "a surrogate is three bad bytes";
}

}  // namespace
}  // namespace trainwatch::heartbeat
