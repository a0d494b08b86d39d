// DNS messages (RFC 1035 section 4): the query a dns monitor sends, and the decoder of
// whatever comes back. Pure: no I/O, so every rule is unit-tested and fuzzed
// (fuzz/dns_message_fuzzer.cc).
//
// The decoder trusts nothing in the answer. Every read is bounds-checked; a compressed
// name may only point backwards, each pointer before the last one's target, so a chain of
// pointers always ends (a loop is refused, not followed); a decoded name is at most 255
// bytes on the wire. Only the header, the questions and the answers are read: the
// authority and additional sections say nothing a monitor judges.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace trainwatch::checks {

inline constexpr size_t kDnsHeaderBytes = 12;

struct DnsQuestion {
  std::string name;  // without the trailing dot; "." for the root
  uint16_t type = 0;
};

struct DnsRecord {
  std::string name;
  uint16_t type = 0;
  uint32_t ttl = 0;
  // The data as text, as dig shows it: "10.0.0.5", "2001:db8::5", "target.test" (CNAME,
  // NS), "10 mail.test" (MX), the strings of a TXT record joined, "ns.test
  // admin.test 1 3600 600 86400 60" (SOA). Empty for types not listed here.
  std::string data;
};

struct DnsResponse {
  uint16_t id = 0;
  bool truncated = false;  // TC: the answer did not fit in the datagram
  int rcode = 0;
  std::vector<DnsQuestion> questions;
  std::vector<DnsRecord> answers;
};

// A recursive query for one name (dots between labels, optional trailing dot) and type,
// class IN. Fails when the name breaks core/dns_name.h's rule.
Result<std::vector<uint8_t>> encode_dns_query(uint16_t id, std::string_view name, uint16_t type);

// Decodes a response; the error says what is wrong and at which byte, e.g. "name pointer
// at byte 40 does not point before byte 12".
Result<DnsResponse> decode_dns_response(std::span<const uint8_t> message);

// "NOERROR", "NXDOMAIN", ...; "RCODE12" for a code without a name.
std::string dns_rcode_name(int rcode);

}  // namespace trainwatch::checks
