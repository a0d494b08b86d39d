// The channel queue on its own: rows and times in, what leaves and when out. No
// dispatcher, no timers, no store.
#include "alerting/channel_queue.h"

#include <gtest/gtest.h>

namespace trainwatch::alerting {
namespace {

using std::chrono::minutes;
using Kind = ChannelQueue::Next::Kind;

const SystemTime kT0 = from_unix_ms(1'700'000'000'000);

QueuedDelivery row(int64_t id, std::string kind, std::optional<int64_t> incident, SystemTime due,
                   std::string monitor = "trainer") {
  QueuedDelivery q;
  q.row.id = id;
  q.row.spec.channel = "slack";
  q.row.spec.monitor = monitor;
  q.row.spec.incident_id = incident;
  q.row.spec.kind = std::move(kind);
  q.row.spec.due = due;
  q.event.monitor = std::move(monitor);
  return q;
}

// Sends the front (as the dispatcher would once next() says so) and returns its id.
int64_t send_front(ChannelQueue& q, SystemTime now) {
  EXPECT_EQ(q.next(now).kind, Kind::kSend);
  return q.start_send().row.id;
}

// Drains the ready FIFO, every send accepted: the ids in the order they leave.
std::vector<int64_t> drain(ChannelQueue& q, SystemTime now) {
  std::vector<int64_t> out;
  while (q.next(now).kind == Kind::kSend) {
    out.push_back(q.start_send().row.id);
    q.end_send(true);
  }
  return out;
}

TEST(ChannelQueue, HoldsUntilDueThenReleasesInDueOrderAndIdOrderOnTies) {
  ChannelQueue q;
  EXPECT_TRUE(q.admit(row(1, "down", 1, kT0 + minutes(5))).empty());
  EXPECT_TRUE(q.admit(row(2, "down", 2, kT0)).empty());
  EXPECT_TRUE(q.admit(row(3, "down", 3, kT0 + minutes(5))).empty());
  EXPECT_TRUE(q.admit(row(4, "reminder", 4, kT0 + minutes(1))).empty());

  q.release_due(kT0, {});
  EXPECT_EQ(q.held(), 3u);
  ASSERT_TRUE(q.next_release());
  EXPECT_EQ(*q.next_release(), kT0 + minutes(1));
  EXPECT_EQ(drain(q, kT0), std::vector<int64_t>{2});

  q.release_due(kT0 + minutes(5), {});
  EXPECT_EQ(q.held(), 0u);
  EXPECT_FALSE(q.next_release());
  EXPECT_EQ(drain(q, kT0 + minutes(5)), (std::vector<int64_t>{4, 1, 3}));
  EXPECT_EQ(q.next(kT0 + minutes(5)).kind, Kind::kIdle);
}

TEST(ChannelQueue, RecoveryOfAHeldDownCancelsBothAndLeavesOtherIncidentsAlone) {
  ChannelQueue q;
  q.admit(row(1, "down", 7, kT0 + minutes(5)));
  q.admit(row(2, "down", 8, kT0 + minutes(5), "other"));
  auto cancelled = q.admit(row(3, "up", 7, kT0 + minutes(2)));
  ASSERT_EQ(cancelled.size(), 2u);
  EXPECT_EQ(cancelled[0].row.id, 1);
  EXPECT_EQ(cancelled[1].row.id, 3);
  EXPECT_NE(cancelled[1].row.last_error.find("never released"), std::string::npos);

  q.release_due(kT0 + minutes(10), {});
  EXPECT_EQ(drain(q, kT0 + minutes(10)), std::vector<int64_t>{2});
}

TEST(ChannelQueue, RecoveryAfterTheDownWasReleasedFollowsIt) {
  ChannelQueue q;
  q.admit(row(1, "down", 7, kT0));
  q.release_due(kT0, {});
  EXPECT_EQ(send_front(q, kT0), 1);  // in flight when the recovery comes
  EXPECT_TRUE(q.admit(row(2, "up", 7, kT0 + minutes(1))).empty());
  q.release_due(kT0 + minutes(1), {});
  EXPECT_EQ(q.next(kT0 + minutes(1)).kind, Kind::kBusy);
  q.end_send(true);
  EXPECT_EQ(drain(q, kT0 + minutes(1)), std::vector<int64_t>{2});
}

TEST(ChannelQueue, OneInFlightAndAFailedFrontWaitsForItsRetryAheadOfTheRest) {
  ChannelQueue q;
  q.admit(row(1, "down", 1, kT0));
  q.admit(row(2, "down", 2, kT0));
  q.release_due(kT0, {});
  EXPECT_EQ(send_front(q, kT0), 1);
  EXPECT_EQ(q.next(kT0).kind, Kind::kBusy);
  EXPECT_EQ(q.in_flight(2), nullptr);  // an answer for another row is not awaited
  ASSERT_NE(q.in_flight(1), nullptr);

  q.in_flight(1)->row.next_attempt = kT0 + minutes(1);
  q.end_send(false);
  const auto next = q.next(kT0 + std::chrono::seconds(59));
  EXPECT_EQ(next.kind, Kind::kWait);
  EXPECT_EQ(next.at, kT0 + minutes(1));
  EXPECT_EQ(drain(q, kT0 + minutes(1)), (std::vector<int64_t>{1, 2}));
}

MaintenanceWindow window(SystemTime start, SystemTime end, std::string monitor) {
  MaintenanceWindow w;
  w.monitors = {std::move(monitor)};
  w.start = start;
  w.end = end;
  return w;
}

TEST(ChannelQueue, MaintenanceHoldsItsMonitorUntilTheWindowEnds) {
  ChannelQueue q;
  const std::vector<MaintenanceWindow> windows{window(kT0, kT0 + minutes(60), "trainer")};
  q.admit(row(1, "down", 1, kT0));
  q.admit(row(2, "down", 2, kT0, "other"));
  q.release_due(kT0 + minutes(1), windows);
  EXPECT_EQ(drain(q, kT0 + minutes(1)), std::vector<int64_t>{2});
  ASSERT_TRUE(q.next_release());
  EXPECT_EQ(*q.next_release(), kT0 + minutes(60));

  q.release_due(kT0 + minutes(60), windows);
  EXPECT_EQ(drain(q, kT0 + minutes(60)), std::vector<int64_t>{1});
}

TEST(ChannelQueue, ARowAttemptedBeforeARestartIsNotHeldAgain) {
  ChannelQueue q;
  auto resumed = row(1, "down", 1, kT0 + minutes(5));
  resumed.row.attempts = 2;
  q.admit(std::move(resumed));
  q.release_due(kT0, {window(kT0, kT0 + minutes(60), "trainer")});
  EXPECT_EQ(drain(q, kT0), std::vector<int64_t>{1});
}

TEST(ChannelQueue, RecheckMakesHeldRowsDueToBeJudgedUnderNewWindows) {
  ChannelQueue q;
  q.admit(row(1, "down", 1, kT0));
  q.release_due(kT0, {window(kT0, kT0 + minutes(60), "trainer")});
  EXPECT_EQ(q.held(), 1u);
  q.recheck_held(kT0 + minutes(2));
  q.release_due(kT0 + minutes(2), {});  // the window was deleted
  EXPECT_EQ(drain(q, kT0 + minutes(2)), std::vector<int64_t>{1});
}

}  // namespace
}  // namespace trainwatch::alerting
