#include <gtest/gtest.h>

#include "config/monitor_target.h"

namespace trainwatch {
namespace {

MonitorConfig monitor(std::string name, decltype(MonitorConfig::spec) spec) {
  MonitorConfig m;
  m.name = std::move(name);
  m.spec = std::move(spec);
  return m;
}

TEST(DescribeTarget, AnHttpUrlLosesCredentialsAndQueryOnlyForThePublic) {
  HttpCheckSpec http;
  http.url = "https://user:pw@api.test:8443/health?key=s3cret";
  const auto m = monitor("api", http);
  EXPECT_EQ(describe_target(m, Audience::kAdmin), "https://user:pw@api.test:8443/health?key=s3cret");
  EXPECT_EQ(describe_target(m, Audience::kPublic), "https://***@api.test:8443/health?***");
}

TEST(DescribeTarget, AHeartbeatShowsOnlyItsTokensStartToEveryone) {
  HeartbeatSpec hb;
  hb.token = "ckpt-0123456789abcdef";
  const auto m = monitor("nightly", hb);
  for (Audience audience : {Audience::kAdmin, Audience::kPublic}) {
    EXPECT_EQ(describe_target(m, audience), "/ping/ckpt\u2026");
  }
}

TEST(DescribeTarget, SocketProbesReadAsHostAndPort) {
  TcpCheckSpec tcp;
  tcp.host = "db.internal";
  tcp.port = 5432;
  EXPECT_EQ(describe_target(monitor("db", tcp), Audience::kPublic), "db.internal:5432");
  TlsCheckSpec tls;
  tls.host = "api.test";
  tls.port = 443;
  EXPECT_EQ(describe_target(monitor("cert", tls), Audience::kPublic), "api.test:443");
  IcmpCheckSpec icmp;
  icmp.host = "10.0.0.7";
  EXPECT_EQ(describe_target(monitor("node", icmp), Audience::kPublic), "10.0.0.7");
}

TEST(DescribeTarget, ADnsQueryNamesItsRecordAndAnyResolverOfItsOwn) {
  DnsCheckSpec dns;
  dns.name = "api.internal";
  dns.record = DnsRecordType::kAaaa;
  EXPECT_EQ(describe_target(monitor("dns", dns), Audience::kPublic), "api.internal AAAA");
  dns.resolver_host = "::1";
  dns.resolver_port = 5353;
  EXPECT_EQ(describe_target(monitor("dns", dns), Audience::kPublic), "api.internal AAAA @[::1]:5353");
}

TEST(DescribeTarget, AJobIsItsApiPath) {
  EXPECT_EQ(describe_target(monitor("llm-7b", JobCheckSpec{}), Audience::kPublic), "/api/v1/jobs/llm-7b");
}

}  // namespace
}  // namespace trainwatch
