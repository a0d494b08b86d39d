#include "config/condition.h"

#include "core/redaction.h"

#include <limits>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace trainwatch {
namespace {

constexpr std::string_view kBody = R"({
  "status": "ok",
  "training": {"overflow_steps": 0, "loss": 1.25, "lr": 3e-4, "step": 1200},
  "ranks": [{"step": 11, "host": "node-1"}, {"step": 9, "host": "gpu-7"}],
  "name": "run a",
  "count": "42",
  "flag": true,
  "off": false,
  "nothing": null,
  "empty": {},
  "big": 18446744073709551615,
  "neg": -7,
  "whole": 5.0,
  "text": "héllo"
})";

// Names parameterized cases after their `name` field (a functor: a lambda's `info` would shadow gtest's).
struct CaseName {
  template <typename Info>
  std::string operator()(const Info& param_info) const {
    return param_info.param.name;
  }
};

struct EvalCase {
  const char* name;
  const char* condition;
  bool ok;
  const char* description = "";  // checked only when !ok
  int status = 200;
  double response_time_ms = 120;
  std::string_view body = kBody;
};

void PrintTo(const EvalCase& c, std::ostream* os) { *os << c.condition; }

class EvaluateTest : public ::testing::TestWithParam<EvalCase> {};

TEST_P(EvaluateTest, Evaluates) {
  const EvalCase& c = GetParam();
  auto parsed = Condition::parse(c.condition);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const std::vector<ConditionOutcome> out =
      evaluate_conditions({parsed.value()}, ConditionInput{c.status, c.response_time_ms, c.body});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].ok, c.ok) << out[0].description;
  EXPECT_EQ(cause_for(out[0].description, Audience::kAdmin), c.ok ? "" : c.description);
}

const EvalCase kEvalCases[] = {
    // [STATUS]
    {"StatusEq", "[STATUS] == 200", true},
    {"StatusEqFails", "[STATUS] == 200", false, "[STATUS] == 503, expected 200", 503},
    {"StatusNe", "[STATUS] != 500", true},
    {"StatusNeFails", "[STATUS] != 200", false, "[STATUS] == 200, expected != 200"},
    {"StatusLt", "[STATUS] < 300", true},
    {"StatusLtFails", "[STATUS] < 300", false, "[STATUS] == 404, expected < 300", 404},
    {"StatusLeEdge", "[STATUS] <= 200", true},
    {"StatusGt", "[STATUS] > 199", true},
    {"StatusGeEdge", "[STATUS] >= 200", true},
    {"StatusGeFails", "[STATUS] >= 201", false, "[STATUS] == 200, expected >= 201"},
    {"NoSpacesAroundOperator", "[STATUS]==200", true},
    {"NumericNotLexical", "[STATUS] < 1000", true},  // as strings "200" > "1000"
    // [RESPONSE_TIME]
    {"ResponseTimeLt", "[RESPONSE_TIME] < 500", true},
    {"ResponseTimeFails", "[RESPONSE_TIME] < 500", false, "[RESPONSE_TIME] == 812, expected < 500", 200, 812},
    {"ResponseTimeFraction", "[RESPONSE_TIME] > 500", false, "[RESPONSE_TIME] == 12.5, expected > 500", 200,
     12.5},
    // [BODY] paths
    {"BodyString", "[BODY].status == ok", true},
    {"BodyStringFails", "[BODY].status == ok", false, "[BODY].status == degraded, expected ok", 200, 120,
     R"({"status":"degraded"})"},
    {"BodyNested", "[BODY].training.overflow_steps == 0", true},
    {"BodyIndex", "[BODY].ranks[0].step > 10", true},
    {"BodyIndexFails", "[BODY].ranks[1].step > 10", false, "[BODY].ranks[1].step == 9, expected > 10"},
    {"BodyRootArray", "[BODY][1] == b", true, "", 200, 120, R"(["a","b"])"},
    {"BodyDouble", "[BODY].training.loss < 2", true},
    {"BodyDoubleExact", "[BODY].training.loss == 1.25", true},
    {"BodyExponent", "[BODY].training.lr == 0.0003", true},
    {"BodyWholeDoubleRendersAsInteger", "[BODY].whole != 5", false, "[BODY].whole == 5, expected != 5"},
    {"BodyNegative", "[BODY].neg < 0", true},
    {"BodyUint64", "[BODY].big == 0", false, "[BODY].big == 18446744073709551615, expected 0"},
    {"BodyNumericString", "[BODY].count == 42.0", true},  // both sides parse as numbers
    {"BodySpacesInLiteral", "[BODY].name == run a", true},
    {"BodyQuotedLiteral", R"([BODY].name == "run a")", true},
    {"BodyQuotedEmpty", R"([BODY].name != "")", true},
    {"BodyBool", "[BODY].flag == true", true},
    {"BodyBoolFails", "[BODY].off == true", false, "[BODY].off == false, expected true"},
    {"BodyNull", "[BODY].nothing == null", true},
    {"BodyObjectRendered", "[BODY].empty == x", false, "[BODY].empty == {}, expected x"},
    {"BodyArrayRendered", "[BODY].a == x", false, "[BODY].a == [1,2], expected x", 200, 120,
     R"({"a":[1,2]})"},
    {"BodyUtf8", "[BODY].text == héllo", true},
    {"StringOrdering", "[BODY].status < z", true},
    {"BodyMissing", "[BODY].gone == ok", false, "[BODY].gone is missing, expected ok"},
    {"BodyMissingNe", "[BODY].gone != ok", false, "[BODY].gone is missing, expected != ok"},
    {"BodyIndexOutOfRange", "[BODY].ranks[5].step > 1", false,
     "[BODY].ranks[5].step is missing, expected > 1"},
    {"BodyKeyOnArray", "[BODY].ranks.step > 1", false, "[BODY].ranks.step is missing, expected > 1"},
    {"BodyIndexOnObject", "[BODY].training[0] == 1", false, "[BODY].training[0] is missing, expected 1"},
    {"RawBody", "[BODY] == pong", true, "", 200, 120, "pong"},
    {"RawBodyNumber", "[BODY] > 3", true, "", 200, 120, "42"},
    {"RawBodyFails", "[BODY] == pong", false, "[BODY] == ping, expected pong", 200, 120, "ping"},
    // len(...)
    {"LenArray", "len([BODY].ranks) == 2", true},
    {"LenArrayFails", "len([BODY].ranks) == 8", false, "len([BODY].ranks) == 2, expected 8"},
    {"LenObject", "len([BODY].training) == 4", true},
    {"LenString", "len([BODY].status) == 2", true},
    {"LenUtf8StringCountsBytes", "len([BODY].text) == 6", true},
    {"LenNumberRendering", "len([BODY].neg) == 2", true},
    {"LenRawBody", "len([BODY]) == 4", true, "", 200, 120, "pong"},
    {"LenStatus", "len([STATUS]) == 3", true},
    {"LenMissing", "len([BODY].gone) == 0", false, "[BODY].gone is missing, expected len([BODY].gone) == 0"},
    {"LenWithSpaces", "len ( [BODY].ranks ) >= 1", true},
    // has(...)
    {"HasBare", "has([BODY].training)", true},
    {"HasBareFails", "has([BODY].gpus)", false, "[BODY].gpus is missing, expected has([BODY].gpus)"},
    {"HasTrue", "has([BODY].ranks[1].host) == true", true},
    {"HasFalse", "has([BODY].gpus) == false", true},
    {"HasFalseFails", "has([BODY].status) == false", false,
     "[BODY].status is present, expected has([BODY].status) == false"},
    {"HasNeFalse", "has([BODY].status) != false", true},
    {"HasNullIsPresent", "has([BODY].nothing)", true},
    {"HasRawBody", "has([BODY])", false, "[BODY] is missing, expected has([BODY])", 200, 120, ""},
    // any(...)
    {"AnyMatches", "[BODY].status == any(degraded, ok)", true},
    {"AnyFails", "[BODY].status == any(a, b)", false, "[BODY].status == ok, expected any(a, b)"},
    {"AnyNumeric", "[STATUS] == any(200, 204)", true},
    {"AnyQuoted", R"([BODY].name == any("run a", "run b"))", true},
    {"AnyNegated", "[STATUS] != any(500, 502)", true},
    {"AnyNegatedFails", "[STATUS] != any(200, 204)", false, "[STATUS] == 200, expected != any(200, 204)"},
    // pat(...)
    {"PatPrefix", "[BODY].ranks[0].host == pat(node-*)", true},
    {"PatFails", "[BODY].ranks[1].host == pat(node-*)", false,
     "[BODY].ranks[1].host == gpu-7, expected pat(node-*)"},
    {"PatInfix", "[BODY] == pat(*ok*)", true, "", 200, 120, "all ok here"},
    {"PatExact", "[BODY].status == pat(ok)", true},
    {"PatExactFails", "[BODY].status == pat(o)", false, "[BODY].status == ok, expected pat(o)"},
    {"PatStarOnly", "[BODY].status == pat(*)", true},
    {"PatMultipleStars", "[BODY].name == pat(r*n*a)", true},
    {"PatBacktracks", "[BODY] == pat(*ab)", true, "", 200, 120, "aaab"},
    {"PatNegated", "[BODY].status != pat(err*)", true},
    {"PatWithParen", "[BODY] == pat(f(x)*)", true, "", 200, 120, "f(x) = 1"},
    {"PatNumber", "[STATUS] == pat(2*)", true},
    // Hostile bodies: never crash, paths count as missing and the reason is given.
    {"NotJson", "[BODY].status == ok", false,
     "[BODY].status is missing (body is not valid JSON: syntax error), expected ok", 200, 120, "<html>"},
    {"EmptyBody", "has([BODY].x) == false", true, "", 200, 120, ""},
    {"InvalidUtf8", "[BODY].status == ok", false,
     "[BODY].status is missing (body is not valid JSON: syntax error), expected ok", 200, 120,
     "{\"status\":\"o\xff\"}"},
    {"InvalidUtf8RawBody", "[BODY] == pat(*ok*)", true, "", 200, 120, "\xff\xfe ok \xc0"},
    {"TruncatedJson", "[BODY].a == 1", false,
     "[BODY].a is missing (body is not valid JSON: incomplete JSON), expected 1", 200, 120, R"({"a":1)"},
    {"HugeNumberIsInfinite", "[BODY].n > 1e300", true, "", 200, 120, R"({"n":1e999})"},
    {"HugeNumberFails", "[BODY].n < 1", false, "[BODY].n == inf, expected < 1", 200, 120, R"({"n":1e999})"},
    {"HugeNegativeNumber", "[BODY].n < -1e300", true, "", 200, 120, R"({"n":-1e999})"},
    {"NanResponseTimeIsNotANumber", "[RESPONSE_TIME] < 500", false, "[RESPONSE_TIME] == nan, expected < 500",
     200, std::numeric_limits<double>::quiet_NaN()},
    {"LongIntegerBecomesDouble", "[BODY].n > 1", true, "", 200, 120,
     R"({"n":123456789012345678901234567890})"},
    {"StringLooksInfinite", "[BODY].s > 1", true, "", 200, 120, R"({"s":"inf"})"},  // "inf" > "1" as strings
};

INSTANTIATE_TEST_SUITE_P(Conditions, EvaluateTest, ::testing::ValuesIn(kEvalCases), CaseName{});

struct ParseErrorCase {
  const char* name;
  const char* condition;
  const char* message;
};

void PrintTo(const ParseErrorCase& c, std::ostream* os) { *os << c.condition; }

class ParseErrorTest : public ::testing::TestWithParam<ParseErrorCase> {};

TEST_P(ParseErrorTest, Explains) {
  const ParseErrorCase& c = GetParam();
  auto parsed = Condition::parse(c.condition);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().code, "config.condition");
  EXPECT_EQ(parsed.error().message, c.message);
}

const ParseErrorCase kParseErrorCases[] = {
    {"Empty", "   ", "empty condition at character 4; expected e.g. [STATUS] == 200"},
    {"UnknownPlaceholder", "[BOD] == 1",
     "unknown placeholder [BOD] at character 1; expected [STATUS], [RESPONSE_TIME], [BODY], [DNS_RCODE], [PACKET_LOSS] or [CERTIFICATE_EXPIRATION]"},
    {"UnknownPlaceholderAfterSpaces", "  [status] == 1",
     "unknown placeholder [status] at character 3; expected [STATUS], [RESPONSE_TIME], [BODY], [DNS_RCODE], [PACKET_LOSS] or [CERTIFICATE_EXPIRATION]"},
    {"NoPlaceholder", "200 == [STATUS]",
     "missing placeholder at character 1; expected [STATUS], [RESPONSE_TIME], [BODY], [DNS_RCODE], "
     "[PACKET_LOSS], [CERTIFICATE_EXPIRATION], len(...) or has(...)"},
    {"UnclosedPlaceholder", "[BODY == 1", "unclosed placeholder at character 1; expected ']'"},
    {"PathOnStatus", "[STATUS].x == 1", "[STATUS] takes no JSON path at character 9; expected an operator"},
    {"EmptyKey", "[BODY]..x == 1", "empty key in JSON path at character 8; expected a key after '.'"},
    {"TrailingDot", "[BODY]. == 1", "empty key in JSON path at character 8; expected a key after '.'"},
    {"BadIndex", "[BODY].a[x] == 1", "bad array index at character 10; expected digits after '['"},
    {"UnclosedIndex", "[BODY].a[1 == 1", "unclosed array index at character 11; expected ']'"},
    {"HugeIndex", "[BODY].a[99999999999999999999999] == 1", "array index too large at character 10"},
    {"MissingOperator", "[STATUS]", "missing operator at character 9; expected ==, !=, <, <=, > or >="},
    {"UnknownOperator", "[STATUS] = 200",
     "unknown operator at character 10; expected ==, !=, <, <=, > or >="},
    {"MissingValue",
     "[STATUS] ==  ", "missing value after == at character 14; expected a value, any(...) or pat(...)"},
    {"PlaceholderOnRight", "[STATUS] == [BODY].code",
     "placeholders and len/has belong on the left at character 13; expected a value, any(...) or pat(...)"},
    {"UnclosedLen", "len([BODY].a == 1", "unclosed len( at character 14; expected ')'"},
    {"UnclosedHas", "has([BODY].a", "unclosed has( at character 13; expected ')'"},
    {"HasWithNumber", "has([BODY].a) == 1",
     "has(...) compares only with true or false at character 15; expected == true or == false"},
    {"HasWithOrdering", "has([BODY].a) < true",
     "has(...) compares only with true or false at character 15; expected == true or == false"},
    {"AnyWithOrdering", "[STATUS] < any(1, 2)",
     "any(...) works only with == or != at character 12; expected == or !="},
    {"UnclosedAny", "[STATUS] == any(1, 2", "unclosed any( at character 21; expected ')'"},
    {"EmptyAnyValue", "[STATUS] == any(1, , 2)",
     "missing value at character 19; expected a value (write \"\" for an empty string)"},
    {"EmptyPat", "[BODY] == pat()",
     "missing value at character 15; expected a value (write \"\" for an empty string)"},
    {"UnterminatedQuote", R"([BODY].a == "abc)",
     "unterminated quote at character 13; expected a closing '\"'"},
};

INSTANTIATE_TEST_SUITE_P(Conditions, ParseErrorTest, ::testing::ValuesIn(kParseErrorCases), CaseName{});

std::vector<Condition> parse_all(const std::vector<std::string>& texts) {
  std::vector<Condition> out;
  for (const std::string& t : texts) {
    auto parsed = Condition::parse(t);
    EXPECT_TRUE(parsed.ok()) << t << ": " << parsed.error().message;
    if (parsed.ok()) out.push_back(std::move(parsed).value());
  }
  return out;
}

TEST(ConditionTest, DnsRcodeComparesAsText) {
  ConditionInput answer{0, 3, "10.0.0.5", "NXDOMAIN"};
  auto rcode = Condition::parse("[DNS_RCODE] == NOERROR");
  ASSERT_TRUE(rcode.ok()) << rcode.error().message;
  auto out = evaluate_conditions({*rcode}, answer);
  EXPECT_FALSE(out[0].ok);
  EXPECT_EQ(out[0].description, "[DNS_RCODE] == NXDOMAIN, expected NOERROR");
  answer.dns_rcode = "NOERROR";
  EXPECT_TRUE(evaluate_conditions({*rcode}, answer)[0].ok);
  EXPECT_EQ(rcode->placeholder(), "[DNS_RCODE]");
}

TEST(ConditionTest, PacketLossComparesAsANumber) {
  ConditionInput echo{0, 0.2, "", "", 33.3};
  auto loss = Condition::parse("[PACKET_LOSS] < 10");
  ASSERT_TRUE(loss.ok()) << loss.error().message;
  auto out = evaluate_conditions({*loss}, echo);
  EXPECT_FALSE(out[0].ok);
  EXPECT_EQ(out[0].description, "[PACKET_LOSS] == 33.3, expected < 10");
  echo.packet_loss_pct = 0;
  EXPECT_TRUE(evaluate_conditions({*loss}, echo)[0].ok);
}

TEST(ConditionTest, NewPlaceholdersTakeNoPathAndStayOnTheLeft) {
  EXPECT_FALSE(Condition::parse("[DNS_RCODE].x == NOERROR").ok());
  EXPECT_FALSE(Condition::parse("[STATUS] == [PACKET_LOSS]").ok());
}

TEST(ConditionTest, KeepsTrimmedText) {
  auto parsed = Condition::parse("  [STATUS] == 200 ");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->text(), "[STATUS] == 200");
}

TEST(ConditionTest, OutcomesFollowConditionOrder) {
  const auto conditions = parse_all({"[STATUS] == 200", "[BODY].status == bad", "[RESPONSE_TIME] < 10"});
  const auto out = evaluate_conditions(conditions, {200, 50, kBody});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(out[0].ok);
  EXPECT_EQ(cause_for(out[1].description, Audience::kAdmin), "[BODY].status == ok, expected bad");
  EXPECT_EQ(out[2].description, "[RESPONSE_TIME] == 50, expected < 10");
}

TEST(ConditionTest, NoConditionsNoOutcomes) { EXPECT_TRUE(evaluate_conditions({}, {200, 1, kBody}).empty()); }

TEST(ConditionTest, CopiesAndMovesKeepBehaviour) {
  auto parsed = Condition::parse("[STATUS] == 200");
  ASSERT_TRUE(parsed.ok());
  Condition copy = parsed.value();
  Condition assigned = parsed.value();
  assigned = copy;
  Condition moved = std::move(copy);
  EXPECT_EQ(moved.text(), "[STATUS] == 200");
  EXPECT_EQ(copy.text(), "");  // NOLINT(bugprone-use-after-move): moved-from is documented as empty here
  const auto out = evaluate_conditions({assigned, moved, copy}, {200, 1, ""});
  EXPECT_TRUE(out[0].ok);
  EXPECT_TRUE(out[1].ok);
  EXPECT_FALSE(out[2].ok);
}

TEST(ConditionTest, DeepNestingIsRejectedNotFollowed) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const auto conditions = parse_all({"[BODY][0] == 1", "len([BODY]) == 200000"});
  const auto out = evaluate_conditions(conditions, {200, 1, deep});
  EXPECT_EQ(out[0].description, "[BODY][0] is missing (body is not valid JSON: too deep), expected 1");
  EXPECT_TRUE(out[1].ok);
}

TEST(ConditionTest, NestingWithinLimitIsRead) {
  std::string body;
  for (int i = 0; i < 60; ++i) body += R"({"a":)";
  body += "7";
  body += std::string(60, '}');
  std::string path = "[BODY]";
  for (int i = 0; i < 60; ++i) path += ".a";
  const auto out = evaluate_conditions(parse_all({path + " == 7"}), {200, 1, body});
  EXPECT_TRUE(out[0].ok) << out[0].description;
}

TEST(ConditionTest, LongFoundValuesAreCut) {
  const std::string body = "x" + std::string(10000, 'y');
  const auto out = evaluate_conditions(parse_all({"[BODY] == z"}), {200, 1, body});
  ASSERT_FALSE(out[0].ok);
  EXPECT_LT(out[0].description.size(), 300u);
  EXPECT_TRUE(cause_for(out[0].description, Audience::kAdmin).starts_with("[BODY] == xyyy"));
  EXPECT_NE(cause_for(out[0].description, Audience::kAdmin).find("..., expected z"), std::string::npos);
}

TEST(ConditionTest, ValuesFromTheBodyAreMarkedForRedaction) {
  const auto conditions = parse_all({"[BODY].status == bad", "len([BODY].ranks) == 1", "[BODY] == pat(*ok*)",
                                     "[STATUS] == 200", "[RESPONSE_TIME] < 10"});
  const auto out = evaluate_conditions(conditions, {503, 50, R"({"status":"SECRET","ranks":[1,2]})"});
  EXPECT_EQ(cause_for(out[0].description, Audience::kPublic), "[BODY].status == (redacted), expected bad");
  EXPECT_EQ(cause_for(out[1].description, Audience::kPublic), "len([BODY].ranks) == (redacted), expected 1");
  EXPECT_EQ(cause_for(out[2].description, Audience::kPublic), "[BODY] == (redacted), expected pat(*ok*)");
  // What the server measured itself is no secret of the target's.
  EXPECT_EQ(cause_for(out[3].description, Audience::kPublic), "[STATUS] == 503, expected 200");
  EXPECT_EQ(cause_for(out[4].description, Audience::kPublic), "[RESPONSE_TIME] == 50, expected < 10");
}

TEST(ConditionTest, CutDoesNotSplitUtf8) {
  std::string body = "a";
  for (int i = 0; i < 200; ++i) body += "é";  // two bytes each, so byte 200 is mid-character
  const auto out = evaluate_conditions(parse_all({"[BODY] == z"}), {200, 1, body});
  const std::string& d = out[0].description;
  const std::size_t dots = d.find("...");
  ASSERT_NE(dots, std::string::npos);
  EXPECT_NE(static_cast<unsigned char>(d[dots - 1]), 0xC3);  // no dangling lead byte
}

TEST(ConditionTest, BodyOnlyParsedWhenAPathIsRead) {
  // Raw-body and status conditions never see JSON errors even if the body is garbage.
  const auto out = evaluate_conditions(parse_all({"[STATUS] == 200", "[BODY] == pat(*)"}), {200, 1, "{"});
  EXPECT_TRUE(out[0].ok);
  EXPECT_TRUE(out[1].ok);
}

TEST(ConditionTest, BodyLargerThanArenaIsParsed) {
  std::string body = R"({"pad":")" + std::string(20000, 'p') + R"(","x":3})";
  const auto out =
      evaluate_conditions(parse_all({"[BODY].x == 3", "len([BODY].pad) == 20000"}), {200, 1, body});
  EXPECT_TRUE(out[0].ok) << out[0].description;
  EXPECT_TRUE(out[1].ok) << out[1].description;
}

TEST(ConditionTest, HostileGlobInputTerminates) {
  const std::string body(50000, 'a');
  const auto out = evaluate_conditions(parse_all({"[BODY] == pat(*a*a*a*a*b)"}), {200, 1, body});
  EXPECT_FALSE(out[0].ok);
}

}  // namespace
}  // namespace trainwatch

namespace trainwatch {
namespace {

constexpr double kHourMs = 3'600'000;

struct CertificateCase {
  const char* name;
  const char* condition;
  std::optional<double> left_ms;
  bool ok;
  const char* description = "";
};

void PrintTo(const CertificateCase& c, std::ostream* os) { *os << c.condition; }

class CertificateExpirationTest : public ::testing::TestWithParam<CertificateCase> {};

TEST_P(CertificateExpirationTest, ComparesTheValidityLeftAsADuration) {
  const CertificateCase& c = GetParam();
  auto parsed = Condition::parse(c.condition);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_TRUE(parsed->reads_certificate_expiration());
  ConditionInput input{200, 5, ""};
  input.certificate_expiration_ms = c.left_ms;
  const auto out = evaluate_conditions({parsed.value()}, input);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].ok, c.ok) << out[0].description;
  EXPECT_EQ(out[0].description, c.ok ? "" : c.description);
}

const CertificateCase kCertificateCases[] = {
    {"WeeksLeft", "[CERTIFICATE_EXPIRATION] > 168h", 30 * 24 * kHourMs, true},
    {"DaysUnit", "[CERTIFICATE_EXPIRATION] >= 7d", 7 * 24 * kHourMs, true},
    {"TooFewLeft", "[CERTIFICATE_EXPIRATION] > 168h", 71 * kHourMs, false,
     "[CERTIFICATE_EXPIRATION] == 2d 23h, expected > 168h"},
    {"Expired", "[CERTIFICATE_EXPIRATION] > 0s", -26 * kHourMs, false,
     "[CERTIFICATE_EXPIRATION] == -1d 2h, expected > 0s"},
    {"MillisecondsToo", "[CERTIFICATE_EXPIRATION] > 1000", 2000, true},
    {"NoCertificate", "[CERTIFICATE_EXPIRATION] > 168h", std::nullopt, false,
     "[CERTIFICATE_EXPIRATION] is missing (no TLS certificate was seen), expected > 168h"},
    {"HasCertificate", "has([CERTIFICATE_EXPIRATION])", 1, true},
    {"YearNineThousand", "[CERTIFICATE_EXPIRATION] > 168h", 2.5e14, true},
};

INSTANTIATE_TEST_SUITE_P(Conditions, CertificateExpirationTest, ::testing::ValuesIn(kCertificateCases),
                         CaseName{});

TEST(ConditionTest, CertificateExpirationWantsADuration) {
  auto words = Condition::parse("[CERTIFICATE_EXPIRATION] > a week");
  ASSERT_FALSE(words.ok());
  EXPECT_EQ(words.error().message, "found 'a week' at character 28; expected a duration such as 168h or 7d");
  auto any = Condition::parse("[CERTIFICATE_EXPIRATION] == any(1d, 2d)");
  ASSERT_FALSE(any.ok());
  EXPECT_EQ(any.error().message,
            "[CERTIFICATE_EXPIRATION] compares only with a duration at character 29; "
            "expected a duration such as 168h or 7d");
  EXPECT_FALSE(Condition::parse("[STATUS] == 200")->reads_certificate_expiration());
}

}  // namespace
}  // namespace trainwatch
