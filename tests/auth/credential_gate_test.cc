#include "auth/credential_gate.h"

#include <gtest/gtest.h>

#include <string>

#include "fakes/manual_clock.h"

namespace trainwatch::auth {
namespace {

TEST(CredentialGateTest, AThrottledSourceIsNotCheckedAndEveryOutcomeIsCounted) {
  testing::ManualClock clock;
  CredentialGate gate(clock, GuessLimits{{2, Millis(1'000), 16}, {2, Millis(1'000), 16}});
  int checks = 0;
  auto wrong = [&] { return ++checks, false; };
  auto right = [&] { return ++checks, true; };
  EXPECT_EQ(gate.attempt(CredentialKind::kBearer, "10.0.0.1", "k1", wrong).verdict, GateVerdict::kRefused);
  EXPECT_EQ(gate.attempt(CredentialKind::kLogin, "10.0.0.1", "k2", wrong).verdict, GateVerdict::kRefused);
  const GateResult throttled = gate.attempt(CredentialKind::kLogin, "10.0.0.1", "k3", right);
  EXPECT_EQ(throttled.verdict, GateVerdict::kThrottled);
  EXPECT_EQ(throttled.retry_after, Millis(1'000));
  EXPECT_EQ(checks, 2);  // the third was never looked at
  // An IPv6 source is its /64: another address in it waits too.
  gate.attempt(CredentialKind::kBearer, "2001:db8::1", "k4", wrong);
  gate.attempt(CredentialKind::kBearer, "2001:db8::2", "k5", wrong);
  EXPECT_EQ(gate.attempt(CredentialKind::kBearer, "2001:db8::3", "k6", right).verdict,
            GateVerdict::kThrottled);
  EXPECT_EQ(gate.attempt(CredentialKind::kBearer, "10.0.0.2", "k7", right).verdict, GateVerdict::kAccepted);

  PrometheusWriter w;
  gate.write_metrics(w);
  const std::string text = w.take();
  EXPECT_NE(text.find("trainwatch_auth_failures_total{kind=\"bearer\"} 3"), std::string::npos) << text;
  EXPECT_NE(text.find("trainwatch_auth_failures_total{kind=\"login\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("trainwatch_auth_throttled_total{kind=\"bearer\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("trainwatch_auth_throttled_total{kind=\"login\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("trainwatch_auth_throttle_entries{table=\"source\"} 3"), std::string::npos) << text;
  EXPECT_NE(text.find("trainwatch_auth_throttle_forgotten_total{table=\"source\"} 0"), std::string::npos)
      << text;
}

TEST(CredentialGateTest, AnAgentsWrongTokensHoldBackItsReportsButNotThePeopleAtItsAddress) {
  testing::ManualClock clock;
  CredentialGate gate(clock, GuessLimits{{2, Millis(1'000), 16}, {2, Millis(1'000), 16}});
  auto wrong = [] { return false; };
  auto right = [] { return true; };
  gate.attempt(CredentialKind::kAgent, "127.0.0.1", "stale", wrong);
  gate.attempt(CredentialKind::kAgent, "127.0.0.1", "stale", wrong);
  EXPECT_EQ(gate.attempt(CredentialKind::kAgent, "127.0.0.1", "fresh", right).verdict,
            GateVerdict::kThrottled);
  EXPECT_EQ(gate.attempt(CredentialKind::kLogin, "127.0.0.1", "user:ada", right).verdict,
            GateVerdict::kAccepted);
  EXPECT_EQ(gate.attempt(CredentialKind::kBearer, "127.0.0.1", "token", right).verdict,
            GateVerdict::kAccepted);

  PrometheusWriter w;
  gate.write_metrics(w);
  const std::string text = w.take();
  EXPECT_NE(text.find("trainwatch_auth_failures_total{kind=\"agent\"} 2"), std::string::npos) << text;
  EXPECT_NE(text.find("trainwatch_auth_throttled_total{kind=\"agent\"} 1"), std::string::npos) << text;
}

}  // namespace
}  // namespace trainwatch::auth
