#include "config/monitor_target.h"

namespace trainwatch {
namespace {

std::string host_port(const std::string& host, uint16_t port) { return host + ":" + std::to_string(port); }

std::string dns_target(const DnsCheckSpec& spec) {
  std::string target = spec.name + " " + std::string(to_string(spec.record));
  if (spec.resolver_host.empty()) return target;
  const bool v6 = spec.resolver_host.find(':') != std::string::npos;
  return target + " @" +
         host_port(v6 ? "[" + spec.resolver_host + "]" : spec.resolver_host, spec.resolver_port);
}

}  // namespace

std::string describe_target(const MonitorConfig& monitor, Audience audience) {
  return std::visit(
      [&](const auto& spec) -> std::string {
        using Spec = std::decay_t<decltype(spec)>;
        if constexpr (std::is_same_v<Spec, HttpCheckSpec>) return url_for(spec.url, audience);
        if constexpr (std::is_same_v<Spec, TcpCheckSpec> || std::is_same_v<Spec, TlsCheckSpec>)
          return host_port(spec.host, spec.port);
        if constexpr (std::is_same_v<Spec, DnsCheckSpec>) return dns_target(spec);
        if constexpr (std::is_same_v<Spec, IcmpCheckSpec>) return spec.host;
        if constexpr (std::is_same_v<Spec, HeartbeatSpec>)
          return "/ping/" + spec.token.substr(0, 4) + "\u2026";
        if constexpr (std::is_same_v<Spec, JobCheckSpec>) return "/api/v1/jobs/" + monitor.name;
      },
      monitor.spec);
}

}  // namespace trainwatch
