#include "checks/icmp_verdict.h"

#include <algorithm>
#include <cmath>

namespace trainwatch::checks {

double packet_loss_pct(const EchoRound& round) {
  if (round.sent <= 0) return 100;
  const double lost = static_cast<double>(round.sent - round.received);
  return std::round(lost * 1000.0 / round.sent) / 10.0;
}

IcmpVerdict judge_echo_round(const IcmpCheckSpec& spec, const std::string& address, const EchoRound& round) {
  IcmpVerdict verdict;
  const bool judges_loss = std::any_of(spec.conditions.begin(), spec.conditions.end(),
                                       [](const Condition& c) { return c.placeholder() == "[PACKET_LOSS]"; });
  if (!judges_loss && round.received == 0) {
    verdict.ok = false;
    verdict.cause = "no echo reply from " + address + " (" + std::to_string(round.sent) + " sent)";
    return verdict;
  }
  ConditionInput input;
  input.response_time_ms = round.average_rtt_ms;
  input.packet_loss_pct = packet_loss_pct(round);
  for (const ConditionOutcome& outcome : evaluate_conditions(spec.conditions, input)) {
    if (outcome.ok) continue;
    verdict.ok = false;
    if (!verdict.cause.empty()) verdict.cause += "; ";
    verdict.cause += outcome.description;
  }
  return verdict;
}

}  // namespace trainwatch::checks
