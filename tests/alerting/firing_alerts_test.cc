// FiringAlerts on its own: what a channel re-sends, and when.
#include "alerting/firing_alerts.h"

#include <gtest/gtest.h>

namespace trainwatch::alerting {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

const SystemTime kT0 = from_unix_ms(1'700'000'000'000);

AlertEvent down(int64_t incident, std::string monitor) {
  AlertEvent e;
  e.monitor = std::move(monitor);
  e.incident_id = incident;
  return e;
}

std::vector<std::string> monitors(const std::vector<AlertEvent>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back(e.monitor);
  return out;
}

TEST(FiringAlerts, AnAlertIsDueOnePeriodAfterItWasDeliveredThenEveryPeriod) {
  FiringAlerts firing(minutes(1));
  EXPECT_FALSE(firing.next_due());
  firing.add(7, down(7, "a"), kT0);
  EXPECT_EQ(firing.next_due(), kT0 + minutes(1));
  EXPECT_TRUE(firing.take_due(kT0 + seconds(59), 64).empty());
  EXPECT_EQ(monitors(firing.take_due(kT0 + minutes(1), 64)), std::vector<std::string>{"a"});
  EXPECT_EQ(firing.next_due(), kT0 + minutes(2));
  // Late (the channel was busy): due again one period after it went.
  EXPECT_EQ(monitors(firing.take_due(kT0 + minutes(2) + seconds(20), 64)), std::vector<std::string>{"a"});
  EXPECT_EQ(firing.next_due(), kT0 + minutes(3) + seconds(20));
}

TEST(FiringAlerts, AReminderDeliveredCountsAsAReSendAndForgetEndsIt) {
  FiringAlerts firing(minutes(1));
  firing.add(7, down(7, "a"), kT0);
  firing.add(7, down(7, "a again"), kT0 + seconds(30));
  EXPECT_EQ(firing.size(), 1u);
  EXPECT_EQ(firing.next_due(), kT0 + seconds(90));
  EXPECT_EQ(monitors(firing.take_due(kT0 + seconds(90), 64)), std::vector<std::string>{"a again"});
  firing.forget(7);
  EXPECT_FALSE(firing.contains(7));
  EXPECT_FALSE(firing.next_due());
  EXPECT_TRUE(firing.take_due(kT0 + minutes(10), 64).empty());
}

TEST(FiringAlerts, TakesTheLongestOverdueFirstAndAtMostTheBatch) {
  FiringAlerts firing(minutes(1));
  firing.add(3, down(3, "c"), kT0 + seconds(20));
  firing.add(1, down(1, "a"), kT0 + seconds(10));
  firing.add(2, down(2, "b"), kT0, /*due_now=*/true);
  EXPECT_EQ(monitors(firing.take_due(kT0 + minutes(2), 2)), (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(monitors(firing.take_due(kT0 + minutes(2), 2)), std::vector<std::string>{"c"});
  EXPECT_EQ(firing.next_due(), kT0 + minutes(3));
}

TEST(FiringAlerts, ANewPeriodAppliesFromTheNextSend) {
  FiringAlerts firing(minutes(1));
  firing.add(1, down(1, "a"), kT0);
  firing.set_every(seconds(10));
  EXPECT_EQ(firing.next_due(), kT0 + minutes(1));
  firing.take_due(kT0 + minutes(1), 64);
  EXPECT_EQ(firing.next_due(), kT0 + minutes(1) + seconds(10));
}

TEST(FiringAlerts, AtTheBoundANewAlertIsNotTrackedButAKnownOneStillIs) {
  FiringAlerts firing(minutes(1));
  for (int64_t i = 0; i < static_cast<int64_t>(FiringAlerts::kMaxFiring); ++i) {
    ASSERT_TRUE(firing.add(i, down(i, "m"), kT0));
  }
  EXPECT_FALSE(firing.add(-1, down(-1, "new"), kT0));
  EXPECT_TRUE(firing.add(0, down(0, "known"), kT0 + seconds(1)));
  EXPECT_EQ(firing.size(), FiringAlerts::kMaxFiring);
}

}  // namespace
}  // namespace trainwatch::alerting
