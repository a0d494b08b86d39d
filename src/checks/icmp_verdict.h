// Judges one round of echo requests against an icmp monitor's conditions. Pure: no I/O.
#pragma once

#include <string>

#include "config/config.h"

namespace trainwatch::checks {

struct EchoRound {
  int sent = 0;
  int received = 0;
  double average_rtt_ms = 0;  // over the replies received; 0 when none came
};

// Percent of requests without a reply, to one decimal: 1 of 3 lost is 33.3.
double packet_loss_pct(const EchoRound& round);

struct IcmpVerdict {
  bool ok = true;
  std::string cause;  // "no echo reply from 10.0.0.9 (3 sent)", "[PACKET_LOSS] == 33.3, expected < 10"
};

// Without a condition on [PACKET_LOSS], only a round with no reply at all fails.
IcmpVerdict judge_echo_round(const IcmpCheckSpec& spec, const std::string& address, const EchoRound& round);

}  // namespace trainwatch::checks
