// The DNS answer decoder (checks/dns_message.h): whatever a resolver, or anything that
// answers on its port, sends back. A decoded answer is also judged, as a check would,
// so the body and cause built from hostile names and data are exercised too.
#include <cstddef>
#include <cstdint>
#include <span>

#include "checks/dns_message.h"
#include "checks/dns_verdict.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto decoded = trainwatch::checks::decode_dns_response(std::span<const uint8_t>(data, size));
  if (!decoded) return 0;
  static const trainwatch::DnsCheckSpec spec = [] {
    trainwatch::DnsCheckSpec s;
    s.name = "api.test";
    for (const char* text : {"[DNS_RCODE] == NOERROR", "[BODY] == pat(10.*)", "len([BODY]) < 100"})
      s.conditions.push_back(*trainwatch::Condition::parse(text));
    return s;
  }();
  for (auto type :
       {trainwatch::DnsRecordType::kA, trainwatch::DnsRecordType::kTxt, trainwatch::DnsRecordType::kSoa}) {
    trainwatch::DnsCheckSpec asked = spec;
    asked.record = type;
    (void)trainwatch::checks::judge_dns_response(asked, *decoded, 1.5).cause.size();
  }
  return 0;
}
