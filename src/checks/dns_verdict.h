// Judges one decoded DNS answer against its monitor's conditions. Pure: no I/O.
//
// [BODY] is the data of every answer record of the asked type (dns_message.h renders
// it), sorted and joined by ",": "10.0.0.5" for one A record, "10.0.0.5,10.0.0.6" for
// two, whatever order the server chose. Records of other types (the CNAME an A query
// went through) are not in it.
#pragma once

#include <string>

#include "checks/dns_message.h"
#include "config/config.h"

namespace trainwatch::checks {

struct DnsVerdict {
  bool ok = true;
  // "[DNS_RCODE] == NXDOMAIN, expected NOERROR", "no A record for api.test"; values from
  // the answer are marked (core/redaction.h).
  std::string cause;
  std::string body;  // what [BODY] was
};

std::string dns_answer_body(const DnsResponse& response, DnsRecordType type);

// Without a condition on [DNS_RCODE], any code but NOERROR fails; without one on
// [BODY], an answer with no record of the asked type fails.
DnsVerdict judge_dns_response(const DnsCheckSpec& spec, const DnsResponse& response, double latency_ms);

}  // namespace trainwatch::checks
