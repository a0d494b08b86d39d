// DefaultCheckers: the checker the engine runs for each monitor type in `trainwatch serve`.
// A new check type adds its checker here (CONTRIBUTING.md). Heartbeat monitors have none:
// they are pushed, not checked (Engine::record_ping).
//
// Threading: the checkers run on the io_context given, the engine's, and arm their
// timeouts through `timers`, which must fire on that same io_context.
#pragma once

#include <boost/asio/io_context.hpp>

#include "checks/dns_checker.h"
#include "checks/http_checker.h"
#include "checks/icmp_checker.h"
#include "checks/tcp_checker.h"
#include "checks/tls_checker.h"
#include "core/clock.h"
#include "core/timer.h"
#include "engine/engine.h"
#include "jobs/job_checker.h"
#include "jobs/job_registry.h"

namespace trainwatch::cli {

class DefaultCheckers final : public engine::CheckerSet {
 public:
  DefaultCheckers(boost::asio::io_context& io, const Clock& clock, TimerFactory& timers,
                  jobs::JobRegistry& jobs, Random& random)
      : http_(io, clock, timers),
        tcp_(io, clock, timers),
        job_(io, jobs),
        dns_(io, clock, timers, random),
        icmp_(io, clock, timers, random),
        tls_(io, clock, timers) {}
  // Once the engine's io_context stopped: waits for the job analyses still running
  // (jobs/job_checker.h), before what they write to is destroyed.
  void stop() { job_.stop(); }

  checks::Checker* for_type(MonitorType type) override {
    switch (type) {
      case MonitorType::kHttp: return &http_;
      case MonitorType::kTcp: return &tcp_;
      case MonitorType::kHeartbeat: return nullptr;  // pushed, not checked: see Engine::record_ping
      case MonitorType::kJob: return &job_;
      case MonitorType::kDns: return &dns_;
      case MonitorType::kIcmp: return &icmp_;
      case MonitorType::kTls: return &tls_;
    }
    return nullptr;
  }

 private:
  checks::HttpChecker http_;
  checks::TcpChecker tcp_;
  jobs::JobChecker job_;
  checks::DnsChecker dns_;
  checks::IcmpChecker icmp_;
  checks::TlsChecker tls_;
};

}  // namespace trainwatch::cli
