#include "checks/http_verdict.h"

#include "core/redaction.h"

#include <gtest/gtest.h>

namespace trainwatch::checks {
namespace {

HttpCheckSpec spec_with(std::vector<std::string> conditions) {
  HttpCheckSpec spec;
  for (const auto& text : conditions) spec.conditions.push_back(*Condition::parse(text));
  return spec;
}

constexpr std::string_view kDegraded = R"({"status":"degraded","training":{"overflow_steps":0}})";
constexpr std::string_view kOk = R"({"status":"ok","training":{"overflow_steps":0}})";

TEST(JudgeHttpResponse, TheSeedsHealthCheckPassesWhenOk) {
  auto spec = spec_with({"[STATUS] == 200", "[BODY].status == ok", "[BODY].training.overflow_steps == 0"});
  auto verdict = judge_http_response(spec, 200, kOk, 3);
  EXPECT_TRUE(verdict.ok);
  EXPECT_EQ(verdict.cause, "");
}

TEST(JudgeHttpResponse, CauseLeadsWithTheStatusThenTheFailedConditions) {
  auto spec = spec_with({"[STATUS] == 200", "[BODY].status == ok", "[BODY].training.overflow_steps == 0"});
  auto verdict = judge_http_response(spec, 503, kDegraded, 3);
  EXPECT_FALSE(verdict.ok);
  EXPECT_EQ(cause_for(verdict.cause, Audience::kAdmin), "HTTP 503; [BODY].status == degraded, expected ok");
}

// A trainwatch agent's /health says why it fails: the cause quotes its first reason, as a
// value from the body (hidden from the public).
TEST(JudgeHttpResponse, TheCauseQuotesTheFirstReasonAHealthAnswerGives) {
  auto spec = spec_with({"[STATUS] == 200"});
  auto verdict = judge_http_response(
      spec, 503,
      R"({"status":"degraded","reasons":[{"code":"rank_gone","message":"rank 5 (pid 41231) is gone while training at step 812"},)"
      R"({"code":"stalled","message":"no step for 600 s"}]})",
      3);
  EXPECT_EQ(cause_for(verdict.cause, Audience::kAdmin),
            "HTTP 503; reason: rank 5 (pid 41231) is gone while training at step 812");
  EXPECT_EQ(cause_for(verdict.cause, Audience::kPublic), "HTTP 503; reason: (redacted)");
  EXPECT_EQ(cause_for(judge_http_response(spec, 503,
                                          R"({"status":"degraded","reason":"the store refuses writes"})", 3)
                          .cause,
                      Audience::kAdmin),
            "HTTP 503; reason: the store refuses writes");
  EXPECT_TRUE(
      judge_http_response(spec, 200, R"({"status":"ok","reasons":[{"message":"x"}]})", 3).cause.empty());
}

TEST(JudgeHttpResponse, ThePublicCauseKeepsTheConditionButNotWhatTheTargetAnswered) {
  auto spec = spec_with({"[STATUS] == 200", "[BODY].status == ok"});
  auto verdict = judge_http_response(spec, 503, R"({"status":"db password is hunter2"})", 3);
  EXPECT_EQ(cause_for(verdict.cause, Audience::kPublic),
            "HTTP 503; [BODY].status == (redacted), expected ok");
  EXPECT_EQ(cause_for(verdict.cause, Audience::kAdmin),
            "HTTP 503; [BODY].status == db password is hunter2, expected ok");
}

TEST(JudgeHttpResponse, WithoutStatusConditionsOnly2xxAnd3xxPass) {
  HttpCheckSpec spec;
  EXPECT_TRUE(judge_http_response(spec, 204, "", 1).ok);
  EXPECT_TRUE(judge_http_response(spec, 302, "", 1).ok);
  auto verdict = judge_http_response(spec, 500, "", 1);
  EXPECT_FALSE(verdict.ok);
  EXPECT_EQ(verdict.cause, "HTTP 500");
}

TEST(JudgeHttpResponse, AStatusConditionReplacesTheDefaultRange) {
  auto spec = spec_with({"[STATUS] == 503"});
  EXPECT_TRUE(judge_http_response(spec, 503, "", 1).ok);
}

TEST(JudgeHttpResponse, KeywordsAreSubstringsOfTheBody) {
  HttpCheckSpec spec;
  spec.keyword = "\"overflow_steps\":0";
  EXPECT_TRUE(judge_http_response(spec, 200, R"({"overflow_steps":0})", 1).ok);
  auto missing = judge_http_response(spec, 200, R"({"overflow_steps":7})", 1);
  EXPECT_EQ(missing.cause, "keyword '\"overflow_steps\":0' not found in the body");
  HttpCheckSpec absent;
  absent.keyword_absent = "degraded";
  EXPECT_EQ(judge_http_response(absent, 200, kDegraded, 1).cause, "keyword 'degraded' found in the body");
}

TEST(JudgeHttpResponse, ResponseTimeConditionNamesTheMeasuredTime) {
  auto spec = spec_with({"[RESPONSE_TIME] < 500"});
  auto verdict = judge_http_response(spec, 200, "", 812);
  EXPECT_EQ(verdict.cause, "[RESPONSE_TIME] == 812, expected < 500");
}

}  // namespace
}  // namespace trainwatch::checks
