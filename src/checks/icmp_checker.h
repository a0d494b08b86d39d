// IcmpChecker: sends a monitor's `count` echo requests at once and waits, up to the
// monitor's timeout, for their replies; [PACKET_LOSS] and the average RTT
// ([RESPONSE_TIME]) come from what came back. Packet build and parse are
// checks/icmp_packet.h, the judgement checks/icmp_verdict.h.
//
// Sockets: an unprivileged ICMP datagram socket (socket(AF_INET, SOCK_DGRAM,
// IPPROTO_ICMP), allowed when the process's group is within net.ipv4.ping_group_range) or
// a raw one (root or CAP_NET_RAW); `socket: auto` tries them in that order. When neither
// is allowed the check fails with "ICMP not permitted: set net.ipv4.ping_group_range or
// grant CAP_NET_RAW".
//
// Bounds: one socket per check in flight (the engine's max_checks_in_flight bounds those),
// at most 100 requests per check (the loader's bound on `count`); packets beyond
// kMaxPacketBytes are cut by the kernel and ignored.
#pragma once

#include <boost/asio/io_context.hpp>

#include "checks/checker.h"
#include "core/clock.h"
#include "core/random.h"
#include "core/timer.h"

namespace trainwatch::checks {

class IcmpChecker final : public Checker {
 public:
  static constexpr size_t kMaxPacketBytes = 1500;

  IcmpChecker(boost::asio::io_context& io, const Clock& clock, TimerFactory& timers, Random& random)
      : io_(io), clock_(clock), timers_(timers), random_(random) {}
  void check(std::shared_ptr<const MonitorConfig> monitor, CheckDone done) override;

 private:
  boost::asio::io_context& io_;
  const Clock& clock_;
  TimerFactory& timers_;  // the monitor's timeout
  Random& random_;        // identifier and payload: what tells this check's replies from others'
};

}  // namespace trainwatch::checks
