// The dispatcher in simulated time: outbox rows in a FakeStore, a FakeSender standing
// for every provider's endpoint, a ManualClock for its timers. Each test says what
// leaves, to which channel, and when.
#include "alerting/dispatcher.h"

#include <gtest/gtest.h>
#include <boost/asio/io_context.hpp>

#include "alerting/event.h"
#include "alerting/planner.h"
#include "config/loader.h"
#include "fakes/fake_sender.h"
#include "fakes/fake_store.h"
#include "fakes/manual_clock.h"
#include "storage/store_errors.h"

namespace trainwatch::alerting {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;
using testing::FakeSender;

// Sends each alert to "fake://<channel>" with "<kind> <monitor>" as the body.
class FakeProvider final : public Provider {
 public:
  explicit FakeProvider(std::string channel) : url_("fake://" + std::move(channel)) {}
  OutboundRequest build(const AlertEvent& event, const Message&, int64_t, SystemTime) const override {
    OutboundRequest r;
    r.url = url_;
    r.body = std::string(to_string(event.kind)) + " " + event.monitor;
    return r;
  }
  std::string target() const override { return url_; }

 private:
  std::string url_;
};

// A receiver that forgets firing alerts, like Alertmanager: alerts as FakeProvider sends
// them, and each re-send as "resend <monitor>[,<monitor>...]".
class FakeResendingProvider final : public Provider, public Resender {
 public:
  FakeResendingProvider(std::string channel, Millis every)
      : url_("fake://" + std::move(channel)), every_(every) {}
  OutboundRequest build(const AlertEvent& event, const Message&, int64_t, SystemTime) const override {
    OutboundRequest r;
    r.url = url_;
    r.body = std::string(to_string(event.kind)) + " " + event.monitor;
    return r;
  }
  std::string target() const override { return url_; }
  const Resender* resender() const override { return this; }
  Millis resend_every() const override { return every_; }
  OutboundRequest build_resend(const std::vector<std::pair<AlertEvent, Message>>& alerts,
                               SystemTime) const override {
    OutboundRequest r;
    r.url = url_;
    r.body = "resend ";
    for (size_t i = 0; i < alerts.size(); ++i) r.body += (i == 0 ? "" : ",") + alerts[i].first.monitor;
    return r;
  }

 private:
  std::string url_;
  Millis every_;
};

Channel channel(const std::string& name, std::optional<Millis> resend_every = std::nullopt) {
  if (resend_every) {
    return Channel{
        name,   "fake", false, Millis(10'000), std::make_shared<FakeResendingProvider>(name, *resend_every),
        nullptr};
  }
  return Channel{name, "fake", false, Millis(10'000), std::make_shared<FakeProvider>(name), nullptr};
}

MaintenanceWindow window_for(const std::string& monitor, SystemTime start, SystemTime end) {
  MaintenanceWindow w;
  w.monitors = {monitor};
  w.start = start;
  w.end = end;
  return w;
}

class DispatcherTest : public ::testing::Test {
 protected:
  void start(std::vector<std::string> names, std::vector<MaintenanceWindow> maintenance = {}) {
    dispatcher_ = std::make_unique<Dispatcher>(
        io_, clock_, clock_, store_, sender_, [this] { return random_; }, policy_);
    std::vector<Channel> channels;
    for (const auto& n : names) {
      auto every = resending_.find(n);
      channels.push_back(channel(n, every == resending_.end() ? std::nullopt : std::optional(every->second)));
    }
    ASSERT_TRUE(dispatcher_->start(std::move(channels), std::move(maintenance)));
    run();
  }

  // An outbox row, committed as the engine would, then the commit callback.
  int64_t add(const std::string& ch, EventKind kind, const std::string& monitor, int64_t incident,
              Millis due_in = Millis(0)) {
    AlertEvent e;
    e.kind = kind;
    e.monitor = monitor;
    e.incident_id = incident;
    e.at = clock_.system_time();
    const int64_t id =
        store_.add_delivery(NewDelivery{ch, monitor, incident, std::string(to_string(kind)), event_to_json(e),
                                        clock_.system_time(), clock_.system_time() + due_in});
    if (dispatcher_) {
      dispatcher_->wake();
      run();
    }
    return id;
  }

  // Runs what was posted to the dispatcher's thread and commits what it wrote.
  void run() {
    io_.poll();
    io_.restart();
    store_.answer_all(Ok{});
  }
  void advance(Millis d) {
    clock_.advance(d);
    run();
  }
  void answer(const std::string& ch, const SendOutcome& outcome) {
    ASSERT_TRUE(sender_.answer("fake://" + ch, outcome)) << "nothing in flight to " << ch;
    run();
  }

  // The bodies sent to a channel, in order, each with its time since the test began.
  std::vector<std::pair<std::string, Millis>> sent_to(const std::string& ch) const {
    std::vector<std::pair<std::string, Millis>> out;
    for (const auto& s : sender_.sent()) {
      if (s.url == "fake://" + ch) out.emplace_back(s.body, std::chrono::duration_cast<Millis>(s.at - t0_));
    }
    return out;
  }
  ChannelHealth health(const std::string& ch) const {
    for (const auto& h : dispatcher_->health()) {
      if (h.name == ch) return h;
    }
    ADD_FAILURE() << "no channel " << ch;
    return {};
  }
  DeliveryStatus status_of(int64_t id) const { return store_.delivery(id).value().status; }

  testing::ManualClock clock_;
  const SystemTime t0_ = clock_.system_time();
  boost::asio::io_context io_;
  testing::FakeStore store_;
  FakeSender sender_{clock_};
  double random_ = 0;                        // no jitter: the backoff is exactly 1 s, 2 s, 4 s, ...
  std::map<std::string, Millis> resending_;  // channels that re-send firing alerts, and how often
  RetryPolicy policy_;
  std::unique_ptr<Dispatcher> dispatcher_;  // last: destroyed before what it uses
};

using Sent = std::vector<std::pair<std::string, Millis>>;

TEST_F(DispatcherTest, ASlowChannelDelaysOnlyItselfAndEachChannelKeepsItsOrder) {
  add("slack", EventKind::kDown, "a", 1);
  add("pager", EventKind::kDown, "a", 1);
  add("slack", EventKind::kDown, "b", 2);
  add("pager", EventKind::kDown, "b", 2);
  start({"slack", "pager"});
  // One request in flight per channel.
  EXPECT_EQ(sent_to("slack"), (Sent{{"down a", Millis(0)}}));
  EXPECT_EQ(sent_to("pager"), (Sent{{"down a", Millis(0)}}));

  // Pager answers while Slack hangs: pager's next alert goes at once.
  answer("pager", FakeSender::accepted());
  EXPECT_EQ(sent_to("pager"), (Sent{{"down a", Millis(0)}, {"down b", Millis(0)}}));
  EXPECT_EQ(sent_to("slack").size(), 1u);

  // Slack fails: its "a" is retried before its "b" goes, one second later.
  advance(seconds(5));
  answer("slack", FakeSender::status(503));
  advance(milliseconds(999));
  EXPECT_EQ(sent_to("slack").size(), 1u);
  advance(milliseconds(1));
  answer("slack", FakeSender::accepted());
  EXPECT_EQ(sent_to("slack"), (Sent{{"down a", Millis(0)}, {"down a", seconds(6)}, {"down b", seconds(6)}}));
}

TEST_F(DispatcherTest, DownThenRecoveryWithinTheHoldSendsNothing) {
  start({"slack"});
  const int64_t down = add("slack", EventKind::kDown, "a", 7, minutes(5));
  advance(minutes(2));
  const int64_t up = add("slack", EventKind::kUp, "a", 7);
  advance(hours(1));
  EXPECT_TRUE(sender_.sent().empty());
  EXPECT_EQ(status_of(down), DeliveryStatus::kCancelled);
  EXPECT_EQ(status_of(up), DeliveryStatus::kCancelled);
  EXPECT_EQ(health("slack").counters.cancelled, 2u);
}

TEST_F(DispatcherTest, AHeldDownLeavesWhenDueAndItsRecoveryFollowsIt) {
  start({"slack"});
  add("slack", EventKind::kDown, "a", 7, minutes(5));
  EXPECT_EQ(health("slack").held, 1u);
  advance(minutes(5) - milliseconds(1));
  EXPECT_TRUE(sender_.sent().empty());
  advance(milliseconds(1));
  answer("slack", FakeSender::accepted());
  advance(minutes(1));
  add("slack", EventKind::kUp, "a", 7);
  answer("slack", FakeSender::accepted());
  EXPECT_EQ(sent_to("slack"), (Sent{{"down a", minutes(5)}, {"up a", minutes(6)}}));
}

TEST_F(DispatcherTest, FailedAttemptsAreRetriedWithTheBackoffUntilAccepted) {
  start({"slack"});
  const int64_t id = add("slack", EventKind::kDown, "a", 1);
  for (int i = 0; i < 3; ++i) {
    answer("slack", FakeSender::status(503));
    advance(seconds(1 << i));
  }
  answer("slack", FakeSender::accepted());
  // Attempts fail at 0, 1 s and 3 s: the waits double (retry_policy.h).
  EXPECT_EQ(
      sent_to("slack"),
      (Sent{{"down a", Millis(0)}, {"down a", seconds(1)}, {"down a", seconds(3)}, {"down a", seconds(7)}}));
  const Delivery row = store_.delivery(id).value();
  EXPECT_EQ(row.status, DeliveryStatus::kDelivered);
  EXPECT_EQ(row.attempts, 4);
  EXPECT_EQ(health("slack").counters.error, 3u);
  EXPECT_EQ(health("slack").consecutive_failures, 0);
}

TEST_F(DispatcherTest, RetryAfterOnA429IsHonouredOverTheBackoff) {
  start({"slack"});
  add("slack", EventKind::kDown, "a", 1);
  answer("slack", FakeSender::status(429, "120"));
  EXPECT_EQ(health("slack").next_attempt, t0_ + seconds(120));
  advance(seconds(119));
  EXPECT_EQ(sent_to("slack").size(), 1u);
  advance(seconds(1));
  EXPECT_EQ(sent_to("slack"), (Sent{{"down a", Millis(0)}, {"down a", seconds(120)}}));
}

TEST_F(DispatcherTest, GivesUpAtThePolicysLimitRecordsItAndMovesOn) {
  policy_.give_up_after = seconds(10);
  start({"slack"});
  const int64_t a = add("slack", EventKind::kDown, "a", 1);
  add("slack", EventKind::kDown, "b", 2);
  // Attempts at 0, 1, 3 and 7 s; the next would be at 15 s, past the 10 s limit.
  answer("slack", FakeSender::status(503));
  advance(seconds(1));
  answer("slack", FakeSender::status(503));
  advance(seconds(2));
  answer("slack", FakeSender::status(503));
  advance(seconds(4));
  answer("slack", FakeSender::status(503));
  const Delivery row = store_.delivery(a).value();
  EXPECT_EQ(row.status, DeliveryStatus::kFailed);
  EXPECT_EQ(row.attempts, 4);
  EXPECT_EQ(row.last_error.rfind("gave up after 10s and 4 attempts: HTTP 503", 0), 0u) << row.last_error;
  EXPECT_EQ(health("slack").counters.gave_up, 1u);
  // The next alert goes at once; "a" is never tried again.
  answer("slack", FakeSender::accepted());
  advance(hours(2));
  EXPECT_EQ(sent_to("slack"), (Sent{{"down a", Millis(0)},
                                    {"down a", seconds(1)},
                                    {"down a", seconds(3)},
                                    {"down a", seconds(7)},
                                    {"down b", seconds(7)}}));
}

TEST_F(DispatcherTest, ARefusedAlertIsNotRetried) {
  start({"slack"});
  const int64_t a = add("slack", EventKind::kDown, "a", 1);
  add("slack", EventKind::kDown, "b", 2);
  answer("slack", FakeSender::status(400));
  EXPECT_EQ(status_of(a), DeliveryStatus::kFailed);
  answer("slack", FakeSender::accepted());
  advance(hours(1));
  EXPECT_EQ(sent_to("slack"), (Sent{{"down a", Millis(0)}, {"down b", Millis(0)}}));
  EXPECT_EQ(health("slack").counters.rejected, 1u);
}

TEST_F(DispatcherTest, MaintenanceHoldsItsMonitorsAlertsUntilTheWindowEnds) {
  start({"slack"}, {window_for("a", t0_, t0_ + hours(1))});
  add("slack", EventKind::kDown, "a", 1);
  add("slack", EventKind::kDown, "b", 2);
  answer("slack", FakeSender::accepted());
  EXPECT_EQ(health("slack").held, 1u);
  advance(hours(1) - milliseconds(1));
  EXPECT_EQ(sent_to("slack"), (Sent{{"down b", Millis(0)}}));
  advance(milliseconds(1));
  EXPECT_EQ(sent_to("slack"), (Sent{{"down b", Millis(0)}, {"down a", hours(1)}}));
}

TEST_F(DispatcherTest, ARecoveryInsideTheWindowCancelsTheHeldDown) {
  start({"slack"}, {window_for("a", t0_, t0_ + hours(1))});
  const int64_t down = add("slack", EventKind::kDown, "a", 1);
  advance(minutes(10));
  add("slack", EventKind::kUp, "a", 1);
  advance(hours(2));
  EXPECT_TRUE(sender_.sent().empty());
  EXPECT_EQ(status_of(down), DeliveryStatus::kCancelled);
}

TEST_F(DispatcherTest, AWindowDeletedEarlyReleasesWhatItHeld) {
  start({"slack"}, {window_for("a", t0_, t0_ + hours(1))});
  add("slack", EventKind::kDown, "a", 1);
  advance(minutes(10));
  EXPECT_TRUE(sender_.sent().empty());
  dispatcher_->set_maintenance({});
  run();
  EXPECT_EQ(sent_to("slack"), (Sent{{"down a", minutes(10)}}));
}

TEST_F(DispatcherTest, ARestartResumesAPendingRetryAtItsTime) {
  const int64_t id = add("slack", EventKind::kDown, "a", 1);
  // Stored by the process before: one failed attempt, next try in 30 s.
  store_.write(UpdateDelivery{id, DeliveryStatus::kPending, 1, t0_, t0_, t0_ + seconds(30), "HTTP 503", 503,
                              std::nullopt});
  store_.answer_all(Ok{});
  start({"slack"});
  advance(seconds(29));
  EXPECT_TRUE(sender_.sent().empty());
  advance(seconds(1));
  answer("slack", FakeSender::accepted());
  EXPECT_EQ(sent_to("slack"), (Sent{{"down a", seconds(30)}}));
  EXPECT_EQ(store_.delivery(id).value().attempts, 2);
}

// The planner writes a reminder into the outbox every remind_every while the incident
// is open; the dispatcher sends them, and nothing more once the monitor recovered.
class DispatcherRemindersTest : public DispatcherTest {
 protected:
  void SetUp() override {
    configure(
        "monitors:\n"
        "  - {name: trainer, type: tcp, host: h, port: 1, notify: [slack], remind_every: 30m}\n"
        "notifications:\n"
        "  - {name: slack, type: ntfy, topic: t}\n",
        {"slack"});
  }

  void configure(const std::string& yaml, const std::vector<std::string>& channels) {
    LoadedConfig loaded = load_config_text(yaml, "c.yaml");
    ASSERT_TRUE(loaded.config);
    config_ = *loaded.config;
    planner_.configure(config_, channels);
  }

  // One check result, applied as the engine would: its outbox rows committed, then the
  // commit callback; every message that leaves is accepted.
  void check(bool ok) {
    MonitorState before, after;
    before.status = down_ ? MonitorStatus::kDown : MonitorStatus::kUp;
    after.status = ok ? MonitorStatus::kUp : MonitorStatus::kDown;
    CheckResult r;
    r.at = clock_.system_time();
    r.ok = ok;
    r.cause = ok ? "" : "connect: connection refused";
    std::optional<Incident> opened, closed;
    if (!ok && !down_) opened = incident_ = Incident{1, "trainer", r.at, std::nullopt, r.cause, ""};
    if (ok && down_) {
      closed = *incident_;
      closed->ended = r.at;
      incident_.reset();
    }
    down_ = !ok;
    if (opened) store_.put_incident(*opened);
    if (closed) store_.put_incident(*closed);
    for (auto& row : planner_.on_apply(engine::AppliedResult{config_.monitors[0], before, after,
                                                             engine::Transition::kChanged, r, opened, closed,
                                                             incident_, false})) {
      store_.add_delivery(std::move(row));
    }
    planner_.committed();
    run();
    sender_.answer_all(FakeSender::accepted());
    run();
  }

  Config config_;
  AlertPlanner planner_{clock_, [this] { dispatcher_->wake(); }};
  bool down_ = false;
  std::optional<Incident> incident_;
};

TEST_F(DispatcherRemindersTest, RemindersLeaveEveryPeriodWhileTheIncidentStaysOpen) {
  start({"slack"});
  for (int minute = 0; minute < 75; ++minute) {
    check(false);
    advance(minutes(1));
  }
  for (int minute = 75; minute < 150; ++minute) {
    check(true);
    advance(minutes(1));
  }
  EXPECT_EQ(sent_to("slack"), (Sent{{"down trainer", Millis(0)},
                                    {"reminder trainer", minutes(30)},
                                    {"reminder trainer", minutes(60)},
                                    {"up trainer", minutes(75)}}));
}

// A channel whose receiver forgets firing alerts (Alertmanager) gets each alert it
// delivered again every period while the incident is open, and nothing after.
TEST_F(DispatcherTest, AFiringAlertIsReSentEveryPeriodUntilItsRecovery) {
  resending_["am"] = minutes(1);
  store_.put_incident(Incident{1, "a", t0_, std::nullopt, "refused", ""});
  start({"am"});
  add("am", EventKind::kDown, "a", 1);
  answer("am", FakeSender::accepted());
  for (int i = 0; i < 3; ++i) {
    advance(minutes(1));
    answer("am", FakeSender::accepted());
  }
  advance(seconds(30));
  store_.put_incident(Incident{1, "a", t0_, clock_.system_time(), "refused", ""});
  add("am", EventKind::kUp, "a", 1);
  answer("am", FakeSender::accepted());
  advance(minutes(10));
  EXPECT_EQ(sent_to("am"), (Sent{{"down a", Millis(0)},
                                 {"resend a", minutes(1)},
                                 {"resend a", minutes(2)},
                                 {"resend a", minutes(3)},
                                 {"up a", minutes(3) + seconds(30)}}));
  EXPECT_EQ(sender_.in_flight("fake://am"), 0u);
  // Re-sends are no outbox rows: the API's deliveries show the DOWN and the recovery only.
  EXPECT_EQ(store_.deliveries(DeliveryQuery{"am", std::nullopt, std::nullopt, std::nullopt, std::nullopt, 50})
                .value()
                .size(),
            2u);
}

TEST_F(DispatcherTest, AReSendCarriesEveryDueAlertAndNeverOvertakesTheOutbox) {
  resending_["am"] = minutes(1);
  for (int64_t id : {1, 2, 3}) store_.put_incident(Incident{id, "m", t0_, std::nullopt, "refused", ""});
  start({"am"});
  add("am", EventKind::kDown, "a", 1);
  add("am", EventKind::kDown, "b", 2);
  answer("am", FakeSender::accepted());
  answer("am", FakeSender::accepted());
  advance(minutes(1));
  // The re-send holds the channel's one request: a new DOWN waits for its answer.
  add("am", EventKind::kDown, "c", 3);
  EXPECT_EQ(sender_.in_flight("fake://am"), 1u);
  answer("am", FakeSender::accepted());
  answer("am", FakeSender::accepted());
  // A failed re-send is not retried before the next period.
  advance(minutes(1));
  answer("am", FakeSender::status(503));
  advance(seconds(59));
  EXPECT_EQ(sender_.in_flight("fake://am"), 0u);
  advance(seconds(1));
  answer("am", FakeSender::accepted());
  EXPECT_EQ(sent_to("am"), (Sent{{"down a", Millis(0)},
                                 {"down b", Millis(0)},
                                 {"resend a,b", minutes(1)},
                                 {"down c", minutes(1)},
                                 {"resend a,b,c", minutes(2)},
                                 {"resend a,b,c", minutes(3)}}));
}

// Deleting a monitor closes its incident without a recovery: the re-sends stop, and
// Alertmanager lets the alert lapse at its endsAt.
TEST_F(DispatcherTest, ReSendsStopWhenTheIncidentClosesWithoutARecovery) {
  resending_["am"] = minutes(1);
  store_.put_incident(Incident{1, "a", t0_, std::nullopt, "refused", ""});
  start({"am"});
  add("am", EventKind::kDown, "a", 1);
  answer("am", FakeSender::accepted());
  advance(minutes(1));
  answer("am", FakeSender::accepted());
  store_.put_incident(Incident{1, "a", t0_, clock_.system_time(), "refused", ""});
  advance(minutes(5));
  EXPECT_EQ(sent_to("am"), (Sent{{"down a", Millis(0)}, {"resend a", minutes(1)}}));
}

TEST_F(DispatcherTest, ARestartKeepsReSendingTheOpenIncidentsAlertsAtOnce) {
  resending_["am"] = minutes(1);
  store_.put_incident(Incident{1, "a", t0_, std::nullopt, "refused", ""});
  store_.put_incident(Incident{2, "b", t0_, std::nullopt, "refused", ""});
  MonitorState down;
  down.status = MonitorStatus::kDown;
  down.open_incident_id = 1;
  store_.put_state("a", down);
  start({"am", "slack"});
  add("am", EventKind::kDown, "a", 1);
  add("slack", EventKind::kDown, "a", 1);
  add("am", EventKind::kDown, "b", 2);
  sender_.answer_all(FakeSender::accepted());
  run();
  // b recovered before the restart.
  store_.put_incident(Incident{2, "b", t0_, clock_.system_time() + seconds(10), "refused", ""});
  MonitorState up;
  up.status = MonitorStatus::kUp;
  store_.put_state("b", up);
  dispatcher_.reset();

  advance(seconds(20));
  start({"am", "slack"});
  advance(minutes(1));
  answer("am", FakeSender::accepted());
  answer("am", FakeSender::accepted());
  EXPECT_EQ(sent_to("am"), (Sent{{"down a", Millis(0)},
                                 {"down b", Millis(0)},
                                 {"resend a", seconds(20)},
                                 {"resend a", seconds(80)}}));
  EXPECT_EQ(sent_to("slack"), (Sent{{"down a", Millis(0)}}));
}

// End to end with the planner: the Alertmanager channel keeps the alert firing without
// any remind_every, and the other channel of the monitor hears of none of it.
class DispatcherReSendPlannerTest : public DispatcherRemindersTest {
 protected:
  void SetUp() override {
    configure(
        "monitors:\n"
        "  - {name: trainer, type: tcp, host: h, port: 1, notify: [am, slack]}\n"
        "notifications:\n"
        "  - {name: am, type: ntfy, topic: t}\n"
        "  - {name: slack, type: ntfy, topic: t}\n",
        {"am", "slack"});
    resending_["am"] = minutes(1);
  }
};

TEST_F(DispatcherReSendPlannerTest, ReSendsAreNoRemindersAndStopAtRecovery) {
  start({"am", "slack"});
  for (int minute = 0; minute < 10; ++minute) {
    check(false);
    advance(minutes(1));
  }
  for (int minute = 10; minute < 20; ++minute) {
    check(true);
    advance(minutes(1));
  }
  Sent am{{"down trainer", Millis(0)}};
  for (int minute = 1; minute <= 10; ++minute) am.emplace_back("resend trainer", minutes(minute));
  am.emplace_back("up trainer", minutes(10));
  EXPECT_EQ(sent_to("am"), am);
  EXPECT_EQ(sent_to("slack"), (Sent{{"down trainer", Millis(0)}, {"up trainer", minutes(10)}}));
}

TEST_F(DispatcherTest, AnOutboxThatCannotBeReadIsReportedAndReadAgainUntilItWorks) {
  start({"slack"});
  EXPECT_FALSE(dispatcher_->outbox_trouble());
  store_.fail_outbox_reads(Error{store_error::kRead, "canceling statement due to lock timeout"});
  add("slack", EventKind::kDown, "api", 1);  // committed; the read that follows fails
  EXPECT_TRUE(sent_to("slack").empty());
  advance(seconds(6));
  auto trouble = dispatcher_->outbox_trouble();
  ASSERT_TRUE(trouble);
  EXPECT_EQ(trouble->error, "canceling statement due to lock timeout");
  EXPECT_GE(trouble->failing_for, Millis(6'000)) << "counted from the first failure, through the retries";
  // The table is free again: no commit comes to wake the dispatcher, its own retry reads.
  store_.fail_outbox_reads(std::nullopt);
  advance(Dispatcher::kOutboxRetry);
  EXPECT_FALSE(dispatcher_->outbox_trouble());
  ASSERT_EQ(sent_to("slack").size(), 1u);
  EXPECT_EQ(sent_to("slack")[0].first, "down api");
}

}  // namespace
}  // namespace trainwatch::alerting
