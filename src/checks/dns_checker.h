// DnsChecker: asks one resolver one question per check, over UDP, and again over TCP when
// the answer comes back truncated. The monitor's timeout bounds the whole exchange (both
// transports). The codec is checks/dns_message.h, the judgement checks/dns_verdict.h.
//
// Causes a person can act on: "no answer from 127.0.0.1:5353 within 5s", "malformed
// answer from 127.0.0.1:5353: name pointer at byte 40 does not point before byte 12",
// "answer from 127.0.0.1:5353 has id 4660, not the query's 43981".
//
// Bounds: one socket per check in flight (the engine's max_checks_in_flight bounds those);
// a UDP answer is read into kMaxUdpAnswerBytes (larger datagrams are cut by the kernel and
// fail to decode); a TCP answer is at most 65,535 bytes by its length prefix.
#pragma once

#include <boost/asio/io_context.hpp>

#include "checks/checker.h"
#include "core/clock.h"
#include "core/random.h"
#include "core/timer.h"

namespace trainwatch::checks {

class DnsChecker final : public Checker {
 public:
  // No EDNS is sent, so a server keeps UDP answers within 512 bytes; some send more.
  static constexpr size_t kMaxUdpAnswerBytes = 4096;

  DnsChecker(boost::asio::io_context& io, const Clock& clock, TimerFactory& timers, Random& random)
      : io_(io), clock_(clock), timers_(timers), random_(random) {}
  void check(std::shared_ptr<const MonitorConfig> monitor, CheckDone done) override;

 private:
  boost::asio::io_context& io_;
  const Clock& clock_;
  TimerFactory& timers_;  // the monitor's timeout
  Random& random_;        // query ids: a predictable id lets an off-path sender forge the answer
};

}  // namespace trainwatch::checks
