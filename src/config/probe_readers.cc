#include "config/probe_readers.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <charconv>

#include "config/conditions_reader.h"
#include "core/dns_name.h"

namespace trainwatch {

namespace {

struct RecordName {
  std::string_view name;
  DnsRecordType type;
};
constexpr std::array<RecordName, 7> kRecords = {{{"A", DnsRecordType::kA},
                                                 {"AAAA", DnsRecordType::kAaaa},
                                                 {"CNAME", DnsRecordType::kCname},
                                                 {"MX", DnsRecordType::kMx},
                                                 {"TXT", DnsRecordType::kTxt},
                                                 {"NS", DnsRecordType::kNs},
                                                 {"SOA", DnsRecordType::kSoa}}};

bool is_ip_address(const std::string& text) {
  std::array<unsigned char, 16> buf{};
  return inet_pton(AF_INET, text.c_str(), buf.data()) == 1 ||
         inet_pton(AF_INET6, text.c_str(), buf.data()) == 1;
}

// "127.0.0.1", "127.0.0.1:5353", "::1", "[::1]:5353" into host and port; false when it is
// none of those.
bool parse_resolver(const std::string& text, std::string& host, uint16_t& port) {
  std::string port_text;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string::npos) return false;
    host = text.substr(1, close - 1);
    if (close + 1 < text.size()) {
      if (text[close + 1] != ':') return false;
      port_text = text.substr(close + 2);
      if (port_text.empty()) return false;
    }
  } else if (std::count(text.begin(), text.end(), ':') == 1) {
    host = text.substr(0, text.find(':'));
    port_text = text.substr(text.find(':') + 1);
    if (port_text.empty()) return false;
  } else {
    host = text;  // no port, or a bare IPv6 address
  }
  if (!is_ip_address(host)) return false;
  port = 53;
  if (port_text.empty()) return true;
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || value == 0 || value > 65535)
    return false;
  port = static_cast<uint16_t>(value);
  return true;
}

}  // namespace

std::string_view to_string(DnsRecordType t) {
  for (const auto& record : kRecords) {
    if (record.type == t) return record.name;
  }
  return "A";
}

namespace config_detail {

void read_dns(Section& s, MonitorConfig& m) {
  DnsCheckSpec spec;
  if (auto query = s.string("query", true)) {
    if (std::string problem = dns_name_problem(*query); !problem.empty()) {
      s.diag().error(s.raw("query").Mark(), s.key_path("query"), "found '" + *query + "'; " + problem);
    }
    spec.name = std::string(dns_name_without_root(*query));
  }
  if (auto record = s.string("record")) {
    std::string upper = *record;
    std::transform(upper.begin(), upper.end(), upper.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    auto found =
        std::find_if(kRecords.begin(), kRecords.end(), [&](const RecordName& r) { return r.name == upper; });
    if (found == kRecords.end()) {
      s.diag().error(s.raw("record").Mark(), s.key_path("record"),
                     "found '" + *record + "'; expected A, AAAA, CNAME, MX, TXT, NS or SOA");
    } else {
      spec.record = found->type;
    }
  }
  if (auto resolver = s.string("resolver"); resolver && !resolver->empty()) {
    if (!parse_resolver(*resolver, spec.resolver_host, spec.resolver_port)) {
      s.diag().error(
          s.raw("resolver").Mark(), s.key_path("resolver"),
          "found '" + *resolver +
              "'; expected an IP address with an optional port, such as 127.0.0.1:5353 or [::1]:53");
    }
  }
  read_conditions(s, "dns", {"[DNS_RCODE]", "[BODY]", "[RESPONSE_TIME]"}, /*json_paths=*/false,
                  spec.conditions);
  m.spec = std::move(spec);
}

void read_icmp(Section& s, MonitorConfig& m) {
  IcmpCheckSpec spec;
  if (auto host = s.string("host", true)) {
    if (!is_ip_address(*host)) {
      if (std::string problem = dns_name_problem(*host); !problem.empty()) {
        s.diag().error(s.raw("host").Mark(), s.key_path("host"), "found '" + *host + "'; " + problem);
      }
    }
    spec.host = *host;
  }
  // Each request is one packet and one reply to wait for; a hundred is already a flood.
  constexpr int64_t kMaxEchoCount = 100;
  if (auto count = s.integer("count", 1, kMaxEchoCount)) spec.count = static_cast<int>(*count);
  if (auto socket = s.string("socket")) {
    if (*socket == "auto") {
      spec.socket = IcmpSocket::kAuto;
    } else if (*socket == "datagram") {
      spec.socket = IcmpSocket::kDatagram;
    } else if (*socket == "raw") {
      spec.socket = IcmpSocket::kRaw;
    } else {
      s.diag().error(s.raw("socket").Mark(), s.key_path("socket"),
                     "found '" + *socket + "'; expected auto, datagram or raw");
    }
  }
  read_conditions(s, "icmp", {"[PACKET_LOSS]", "[RESPONSE_TIME]"}, /*json_paths=*/false, spec.conditions);
  m.spec = std::move(spec);
}

}  // namespace config_detail
}  // namespace trainwatch
