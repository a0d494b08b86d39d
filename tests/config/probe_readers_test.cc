#include <gtest/gtest.h>

#include "config/loader.h"
#include "config/monitor_target.h"

namespace trainwatch {
namespace {

LoadedConfig load(const std::string& text) {
  return load_config_text(text, "tw.yaml", [](const std::string&) { return std::optional<std::string>(); });
}

std::vector<std::string> errors_of(const std::string& text) {
  std::vector<std::string> lines;
  for (const auto& e : load(text).errors) lines.push_back(e.to_string());
  return lines;
}

TEST(LoadDns, ReadsQueryRecordResolverAndConditions) {
  auto loaded = load(R"(monitors:
  - name: api-dns
    type: dns
    query: API.internal.
    record: aaaa
    resolver: 127.0.0.1:5353
    conditions:
      - "[DNS_RCODE] == NOERROR"
      - "[BODY] == 2001:db8::5"
  - name: system-resolver
    type: dns
    query: example.com
  - name: v6-resolver
    type: dns
    query: example.com
    record: MX
    resolver: "[::1]:53"
)");
  ASSERT_TRUE(loaded.config) << loaded.errors.front().to_string();
  const auto& dns = std::get<DnsCheckSpec>(loaded.config->monitors[0].spec);
  EXPECT_EQ(loaded.config->monitors[0].type, MonitorType::kDns);
  EXPECT_EQ(dns.name, "API.internal");
  EXPECT_EQ(dns.record, DnsRecordType::kAaaa);
  EXPECT_EQ(dns.resolver_host, "127.0.0.1");
  EXPECT_EQ(dns.resolver_port, 5353);
  EXPECT_EQ(dns.conditions.size(), 2u);
  EXPECT_EQ(describe_target(loaded.config->monitors[0], Audience::kAdmin),
            "API.internal AAAA @127.0.0.1:5353");
  const auto& plain = std::get<DnsCheckSpec>(loaded.config->monitors[1].spec);
  EXPECT_EQ(plain.record, DnsRecordType::kA);
  EXPECT_EQ(plain.resolver_host, "");
  EXPECT_EQ(describe_target(loaded.config->monitors[1], Audience::kAdmin), "example.com A");
  EXPECT_EQ(std::get<DnsCheckSpec>(loaded.config->monitors[2].spec).resolver_host, "::1");
  EXPECT_EQ(describe_target(loaded.config->monitors[2], Audience::kAdmin), "example.com MX @[::1]:53");
}

TEST(LoadDns, BadNamesRecordsAndResolversNameTheirPlace) {
  const std::string long_label(64, 'a');
  std::string long_name;
  while (long_name.size() < 254) long_name += "abcdefgh.";
  auto errors = errors_of(
      "monitors:\n"
      "  - name: a\n    type: dns\n    query: x." +
      long_label +
      ".test\n"
      "  - name: b\n    type: dns\n    query: " +
      long_name +
      "\n"
      "  - name: c\n    type: dns\n    query: c.test\n    record: PTR\n"
      "  - name: d\n    type: dns\n    query: d.test\n    resolver: dns.google:53\n"
      "  - name: e\n    type: dns\n    query: e.test\n    resolver: 127.0.0.1:99999\n"
      "  - name: f\n    type: dns\n    query: f..test\n");
  ASSERT_EQ(errors.size(), 6u);
  EXPECT_EQ(errors[0], "tw.yaml:4:12: monitors[0].query: found 'x." + long_label +
                           ".test'; expected labels of at most 63 characters; label 2 has 64");
  EXPECT_EQ(errors[1], "tw.yaml:7:12: monitors[1].query: found '" + long_name +
                           "'; expected at most 253 characters, not " + std::to_string(long_name.size() - 1));
  EXPECT_EQ(errors[2],
            "tw.yaml:11:13: monitors[2].record: found 'PTR'; expected A, AAAA, CNAME, MX, TXT, NS or SOA");
  EXPECT_EQ(
      errors[3],
      "tw.yaml:15:15: monitors[3].resolver: found 'dns.google:53'; expected an IP address with an optional "
      "port, such as 127.0.0.1:5353 or [::1]:53");
  EXPECT_EQ(errors[4].rfind("tw.yaml:19:15: monitors[4].resolver: found '127.0.0.1:99999'; expected", 0), 0u)
      << errors[4];
  EXPECT_EQ(errors[5],
            "tw.yaml:22:12: monitors[5].query: found 'f..test'; expected no empty label (two dots in a "
            "row, or a leading dot)");
}

TEST(LoadDns, QueryIsRequiredAndPlaceholdersBelongToTheType) {
  auto errors = errors_of(R"(monitors:
  - name: a
    type: dns
    conditions:
      - "[STATUS] == 200"
      - "[BODY].ip == 10.0.0.5"
  - name: b
    type: http
    url: http://127.0.0.1/
    conditions:
      - "[DNS_RCODE] == NOERROR"
      - "[BODY].status == ok"
)");
  ASSERT_EQ(errors.size(), 4u);
  EXPECT_EQ(errors[0], "tw.yaml:2:5: monitors[0].query: missing; expected a value");
  EXPECT_EQ(errors[1],
            "tw.yaml:5:9: monitors[0].conditions[0]: found [STATUS], which dns monitors do not have; "
            "expected [DNS_RCODE], [BODY] or [RESPONSE_TIME]");
  EXPECT_EQ(errors[2],
            "tw.yaml:6:9: monitors[0].conditions[1]: found [BODY].ip, which dns monitors do not have; "
            "expected [DNS_RCODE], [BODY] or [RESPONSE_TIME]");
  EXPECT_EQ(errors[3],
            "tw.yaml:11:9: monitors[1].conditions[0]: found [DNS_RCODE], which http monitors do not have; "
            "expected [STATUS], [RESPONSE_TIME], [BODY] or [CERTIFICATE_EXPIRATION]");
}

TEST(LoadIcmp, ReadsHostCountSocketAndConditions) {
  auto loaded = load(R"(monitors:
  - name: gpu-node
    type: icmp
    host: 127.0.0.1
    count: 5
    socket: datagram
    conditions:
      - "[PACKET_LOSS] < 20"
      - "[RESPONSE_TIME] < 5"
  - name: by-name
    type: icmp
    host: localhost
)");
  ASSERT_TRUE(loaded.config) << loaded.errors.front().to_string();
  const auto& icmp = std::get<IcmpCheckSpec>(loaded.config->monitors[0].spec);
  EXPECT_EQ(icmp.host, "127.0.0.1");
  EXPECT_EQ(icmp.count, 5);
  EXPECT_EQ(icmp.socket, IcmpSocket::kDatagram);
  EXPECT_EQ(icmp.conditions.size(), 2u);
  const auto& plain = std::get<IcmpCheckSpec>(loaded.config->monitors[1].spec);
  EXPECT_EQ(plain.count, 3);
  EXPECT_EQ(plain.socket, IcmpSocket::kAuto);
}

TEST(LoadIcmp, BadKeysNameTheirPlace) {
  auto errors = errors_of(R"(monitors:
  - name: a
    type: icmp
    host: "bad host"
    count: 0
    socket: magic
    conditions:
      - "[BODY] == x"
)");
  ASSERT_EQ(errors.size(), 4u);
  EXPECT_EQ(errors[0],
            "tw.yaml:4:11: monitors[0].host: found 'bad host'; expected letters, digits, '-', '_' or '*' "
            "between the dots");
  EXPECT_EQ(errors[1], "tw.yaml:5:12: monitors[0].count: found '0'; expected a whole number from 1 to 100");
  EXPECT_EQ(errors[2], "tw.yaml:6:13: monitors[0].socket: found 'magic'; expected auto, datagram or raw");
  EXPECT_EQ(errors[3],
            "tw.yaml:8:9: monitors[0].conditions[0]: found [BODY], which icmp monitors do not have; "
            "expected [PACKET_LOSS] or [RESPONSE_TIME]");
}

TEST(LoadProbes, ReloadKeepsStateOnlyWhenTheCheckIsTheSame) {
  auto a = load("monitors:\n  - name: d\n    type: dns\n    query: a.test\n");
  auto b = load("monitors:\n  - name: d\n    type: dns\n    query: a.test\n    record: MX\n");
  auto c = load("monitors:\n  - name: i\n    type: icmp\n    host: 127.0.0.1\n");
  auto d = load("monitors:\n  - name: i\n    type: icmp\n    host: 127.0.0.1\n    count: 4\n");
  ASSERT_TRUE(a.config && b.config && c.config && d.config);
  EXPECT_TRUE(same_check(a.config->monitors[0], a.config->monitors[0]));
  EXPECT_FALSE(same_check(a.config->monitors[0], b.config->monitors[0]));
  EXPECT_TRUE(same_check(c.config->monitors[0], c.config->monitors[0]));
  EXPECT_FALSE(same_check(c.config->monitors[0], d.config->monitors[0]));
}

}  // namespace
}  // namespace trainwatch
