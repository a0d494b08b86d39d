#include "checks/dns_verdict.h"

#include <gtest/gtest.h>

#include "core/redaction.h"

namespace trainwatch::checks {
namespace {

DnsCheckSpec spec_with(std::vector<std::string> conditions, DnsRecordType record = DnsRecordType::kA) {
  DnsCheckSpec spec;
  spec.name = "api.test";
  spec.record = record;
  for (const auto& text : conditions) spec.conditions.push_back(*Condition::parse(text));
  return spec;
}

DnsResponse answer(int rcode, std::vector<DnsRecord> records) {
  DnsResponse r;
  r.rcode = rcode;
  r.answers = std::move(records);
  return r;
}

constexpr uint16_t kA = 1, kCname = 5;

TEST(DnsVerdict, BodyIsTheAskedTypesDataSortedAndJoined) {
  auto r = answer(0, {{"api.test", kCname, 60, "web.test"},
                      {"web.test", kA, 60, "10.0.0.6"},
                      {"web.test", kA, 60, "10.0.0.5"}});
  EXPECT_EQ(dns_answer_body(r, DnsRecordType::kA), "10.0.0.5,10.0.0.6");
  EXPECT_EQ(dns_answer_body(r, DnsRecordType::kCname), "web.test");
  EXPECT_EQ(dns_answer_body(r, DnsRecordType::kMx), "");
}

TEST(DnsVerdict, ConditionsOnRcodeBodyAndTimePass) {
  auto v =
      judge_dns_response(spec_with({"[DNS_RCODE] == NOERROR", "[BODY] == 10.0.0.5", "[RESPONSE_TIME] < 50"}),
                         answer(0, {{"api.test", kA, 60, "10.0.0.5"}}), 3);
  EXPECT_TRUE(v.ok) << v.cause;
  EXPECT_EQ(v.cause, "");
  EXPECT_EQ(v.body, "10.0.0.5");
}

TEST(DnsVerdict, AWrongAddressNamesWhatCameBack) {
  auto v =
      judge_dns_response(spec_with({"[BODY] == 10.0.0.5"}), answer(0, {{"api.test", kA, 60, "10.9.9.9"}}), 3);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(cause_for(v.cause, Audience::kAdmin), "[BODY] == 10.9.9.9, expected 10.0.0.5");
}

TEST(DnsVerdict, WithoutAnRcodeConditionOnlyNoerrorPasses) {
  auto v = judge_dns_response(spec_with({}), answer(3, {}), 3);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.cause, "[DNS_RCODE] == NXDOMAIN, expected NOERROR");
  auto expected_nx = judge_dns_response(spec_with({"[DNS_RCODE] == NXDOMAIN"}), answer(3, {}), 3);
  EXPECT_TRUE(expected_nx.ok) << expected_nx.cause;
}

TEST(DnsVerdict, WithoutABodyConditionAnEmptyAnswerFails) {
  auto v = judge_dns_response(spec_with({}), answer(0, {{"api.test", kCname, 60, "web.test"}}), 3);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.cause, "no A record for api.test");
  auto allowed = judge_dns_response(spec_with({"[BODY] == \"\""}), answer(0, {}), 3);
  EXPECT_TRUE(allowed.ok) << allowed.cause;
}

}  // namespace
}  // namespace trainwatch::checks
