// same_check (config.h): whether two monitor configs check the same thing the same way,
// so that a reload keeps the monitor's state and history. It compares the check (name,
// type, timing, tags and the type's spec), not the alerting or dependency keys.
#include <string>
#include <variant>
#include <vector>

#include "config/config.h"

namespace trainwatch {

bool same_check(const MonitorConfig& a, const MonitorConfig& b) {
  if (a.name != b.name || a.type != b.type || a.interval != b.interval || a.timeout != b.timeout ||
      a.retries != b.retries || a.tags != b.tags) {
    return false;
  }
  if (const auto* ha = std::get_if<HttpCheckSpec>(&a.spec)) {
    const auto& hb = std::get<HttpCheckSpec>(b.spec);
    std::vector<std::string> ca, cb;
    for (const auto& c : ha->conditions) ca.push_back(c.text());
    for (const auto& c : hb.conditions) cb.push_back(c.text());
    return ha->url == hb.url && ha->method == hb.method && ha->headers == hb.headers && ha->body == hb.body &&
           ha->follow_redirects == hb.follow_redirects && ha->tls_verify == hb.tls_verify &&
           ha->keyword == hb.keyword && ha->keyword_absent == hb.keyword_absent && ca == cb;
  }
  if (const auto* ba = std::get_if<HeartbeatSpec>(&a.spec)) {
    const auto& bb = std::get<HeartbeatSpec>(b.spec);
    return ba->period == bb.period && ba->schedule == bb.schedule && ba->grace == bb.grace &&
           ba->token == bb.token && ba->ping_body_limit == bb.ping_body_limit;
  }
  if (const auto* ja = std::get_if<JobCheckSpec>(&a.spec)) {
    const auto& jb = std::get<JobCheckSpec>(b.spec);
    const JobThresholds& x = ja->thresholds;
    const JobThresholds& y = jb.thresholds;
    return ja->world_size == jb.world_size && x.startup_timeout == y.startup_timeout &&
           x.step_timeout == y.step_timeout && x.step_timeout_min == y.step_timeout_min &&
           x.checkpoint_timeout == y.checkpoint_timeout &&
           x.checkpoint_timeout_min == y.checkpoint_timeout_min && x.missed_reports == y.missed_reports &&
           x.node_silent_after == y.node_silent_after && x.straggler_ratio == y.straggler_ratio &&
           x.throughput_drop == y.throughput_drop && x.overflow_streak == y.overflow_streak &&
           x.min_loss_scale == y.min_loss_scale && x.gpu_memory_pct == y.gpu_memory_pct &&
           x.disk_free_bytes == y.disk_free_bytes && x.host_memory_free_bytes == y.host_memory_free_bytes;
  }
  auto texts = [](const std::vector<Condition>& conditions) {
    std::vector<std::string> out;
    out.reserve(conditions.size());
    for (const auto& c : conditions) out.push_back(c.text());
    return out;
  };
  if (const auto* da = std::get_if<DnsCheckSpec>(&a.spec)) {
    const auto& db = std::get<DnsCheckSpec>(b.spec);
    return da->name == db.name && da->record == db.record && da->resolver_host == db.resolver_host &&
           da->resolver_port == db.resolver_port && texts(da->conditions) == texts(db.conditions);
  }
  if (const auto* ia = std::get_if<IcmpCheckSpec>(&a.spec)) {
    const auto& ib = std::get<IcmpCheckSpec>(b.spec);
    return ia->host == ib.host && ia->count == ib.count && ia->socket == ib.socket &&
           texts(ia->conditions) == texts(ib.conditions);
  }
  if (const auto* la = std::get_if<TlsCheckSpec>(&a.spec)) {
    const auto& lb = std::get<TlsCheckSpec>(b.spec);
    return la->host == lb.host && la->port == lb.port && la->server_name == lb.server_name &&
           la->ca_file == lb.ca_file && la->warn_before == lb.warn_before &&
           la->down_before == lb.down_before;
  }
  const auto& ta = std::get<TcpCheckSpec>(a.spec);
  const auto& tb = std::get<TcpCheckSpec>(b.spec);
  return ta.host == tb.host && ta.port == tb.port;
}

}  // namespace trainwatch
