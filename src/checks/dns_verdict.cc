#include "checks/dns_verdict.h"

#include <algorithm>

namespace trainwatch::checks {
namespace {

bool reads(const std::vector<Condition>& conditions, std::string_view placeholder) {
  return std::any_of(conditions.begin(), conditions.end(),
                     [&](const Condition& c) { return c.placeholder() == placeholder; });
}

void append_part(std::string& cause, std::string_view part) {
  if (!cause.empty()) cause += "; ";
  cause += part;
}

}  // namespace

std::string dns_answer_body(const DnsResponse& response, DnsRecordType type) {
  std::vector<std::string_view> data;
  for (const DnsRecord& record : response.answers) {
    if (record.type == static_cast<uint16_t>(type)) data.emplace_back(record.data);
  }
  std::sort(data.begin(), data.end());
  std::string body;
  for (std::string_view d : data) {
    if (!body.empty()) body += ",";
    body += d;
  }
  return body;
}

DnsVerdict judge_dns_response(const DnsCheckSpec& spec, const DnsResponse& response, double latency_ms) {
  DnsVerdict verdict;
  verdict.body = dns_answer_body(response, spec.record);
  const std::string rcode = dns_rcode_name(response.rcode);
  if (!reads(spec.conditions, "[DNS_RCODE]") && response.rcode != 0) {
    verdict.ok = false;
    append_part(verdict.cause, "[DNS_RCODE] == " + rcode + ", expected NOERROR");
  } else if (!reads(spec.conditions, "[BODY]") && response.rcode == 0 && verdict.body.empty()) {
    verdict.ok = false;
    append_part(verdict.cause, "no " + std::string(to_string(spec.record)) + " record for " + spec.name);
  }
  ConditionInput input;
  input.response_time_ms = latency_ms;
  input.body = verdict.body;
  input.dns_rcode = rcode;
  const auto outcomes = evaluate_conditions(spec.conditions, input);
  for (const ConditionOutcome& outcome : outcomes) {
    if (outcome.ok) continue;
    verdict.ok = false;
    append_part(verdict.cause, outcome.description);
  }
  return verdict;
}

}  // namespace trainwatch::checks
