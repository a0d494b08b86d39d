// The engine shows a state change only once the store committed it, and writes it again
// until it does: a full disk delays a DOWN and its alert, never loses them.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "engine/engine.h"
#include "fakes/fake_store.h"
#include "fakes/manual_clock.h"
#include "storage/store_errors.h"

namespace trainwatch::engine {
namespace {

namespace asio = boost::asio;

// Every check fails, on the io thread, as a real checker answers.
class FailingChecker final : public checks::Checker {
 public:
  explicit FailingChecker(asio::io_context& io) : io_(io) {}
  void check(std::shared_ptr<const MonitorConfig>, checks::CheckDone done) override {
    asio::post(io_, [done = std::move(done)] {
      CheckResult r;
      r.ok = false;
      r.cause = "connection refused";
      done(r);
    });
  }

 private:
  asio::io_context& io_;
};

class OneChecker final : public CheckerSet {
 public:
  explicit OneChecker(checks::Checker& c) : c_(c) {}
  checks::Checker* for_type(MonitorType) override { return &c_; }

 private:
  checks::Checker& c_;
};

// Notifies one channel of every DOWN, and counts commits reported.
class CountingHook final : public AlertHook {
 public:
  std::vector<NewDelivery> on_apply(const AppliedResult& a) override {
    if (!a.opened) return {};
    NewDelivery d;
    d.channel = "hook";
    d.monitor = a.monitor.name;
    d.incident_id = a.opened->id;
    d.kind = "down";
    return {d};
  }
  void committed() override { ++commits; }
  int commits = 0;
};

class CommitTest : public ::testing::Test {
 protected:
  CommitTest() : checker_(io_), checkers_(checker_), engine_(io_, clock_, clock_, store_, checkers_, &hook_) {
    MonitorConfig m;
    m.name = "trainer";
    m.interval = Millis(3'600'000);  // one check in the test: the first, due at once
    config_.monitors.push_back(m);
  }

  // Runs the io thread's handlers and moves simulated time (timers fire) until `done()`,
  // for at most 100 s of it: retries are at most 5 s apart.
  template <typename Pred>
  bool run_until(Pred done) {
    for (int i = 0; i < 2'000 && !done(); ++i) {
      io_.restart();  // it stops whenever it runs out of work
      io_.poll();
      if (!done()) clock_.advance(Millis(50));
    }
    return done();
  }

  asio::io_context io_;
  testing::ManualClock clock_;
  testing::FakeStore store_;
  FailingChecker checker_;
  OneChecker checkers_;
  CountingHook hook_;
  Engine engine_;
  Config config_;
};

TEST_F(CommitTest, ADownIsShownOnlyOnceStoredAndItsWriteIsRetriedUntilItCommits) {
  ASSERT_TRUE(engine_.start(config_).ok());
  ASSERT_TRUE(run_until([&] { return store_.front<RecordResult>() != nullptr; }));
  const RecordResult* down = store_.front<RecordResult>();
  EXPECT_EQ(down->state.status, MonitorStatus::kDown);
  ASSERT_TRUE(down->opened.has_value()) << "the incident goes in the same write as the state";
  EXPECT_EQ(down->outbox.size(), 1u) << "and so does its alert";
  const int64_t incident = down->opened->id;

  // Not committed yet: nobody sees the incident.
  auto view = engine_.monitor("trainer");
  EXPECT_NE(view->state.status, MonitorStatus::kDown);
  EXPECT_FALSE(view->open_incident.has_value());

  // The disk is full: the write is refused, and tried again.
  for (int refusals = 0; refusals < 3; ++refusals) {
    ASSERT_TRUE(store_.answer(make_error(store_error::kUnavailable, "database or disk is full")));
    ASSERT_TRUE(run_until([&] { return store_.waiting() > 0; })) << "no retry after refusal " << refusals;
    const RecordResult* again = store_.front<RecordResult>();
    ASSERT_NE(again, nullptr);
    ASSERT_TRUE(again->opened.has_value());
    EXPECT_EQ(again->opened->id, incident) << "the same change, not a new one";
    EXPECT_FALSE(engine_.monitor("trainer")->open_incident.has_value());
    EXPECT_EQ(engine_.stats().changes_waiting, 1u);
    EXPECT_EQ(hook_.commits, 0);
  }

  // Space is back: it commits, and only now is it shown and its alert released.
  ASSERT_TRUE(store_.answer(Ok{}));
  ASSERT_TRUE(run_until([&] { return engine_.monitor("trainer")->open_incident.has_value(); }));
  view = engine_.monitor("trainer");
  EXPECT_EQ(view->state.status, MonitorStatus::kDown);
  EXPECT_EQ(view->open_incident->id, incident);
  EXPECT_EQ(hook_.commits, 1);
  EXPECT_EQ(engine_.stats().changes_waiting, 0u);
}

TEST_F(CommitTest, PingsWhileAChangeIsRefusedAreAnsweredUnavailable) {
  MonitorConfig hb;
  hb.name = "nightly";
  hb.type = MonitorType::kHeartbeat;
  HeartbeatSpec spec;
  spec.period = Millis(3'600'000);
  spec.grace = Millis(3'600'000);
  hb.spec = spec;
  config_.monitors = {hb};
  ASSERT_TRUE(engine_.start(config_).ok());

  // A fail ping takes the monitor DOWN; the store refuses that change.
  Ping fail;
  fail.kind = PingKind::kFail;
  std::optional<Status> fail_answer;
  engine_.record_ping("nightly", fail, [&](const Status& s) { fail_answer = s; });
  ASSERT_TRUE(run_until([&] { return store_.waiting() >= 2; }));  // its change, then its own row
  const Status full = make_error(store_error::kUnavailable, "database or disk is full");
  while (store_.answer(full)) {
  }
  ASSERT_TRUE(run_until([&] { return fail_answer.has_value(); }));
  EXPECT_FALSE(fail_answer->ok());
  ASSERT_TRUE(run_until([&] { return store_.front<RecordResult>() != nullptr; }))
      << "the change is written again";

  // A ping now cannot be stored behind it: it gets an error, never an acknowledgement.
  std::optional<Status> answer;
  engine_.record_ping("nightly", Ping{}, [&](const Status& s) { answer = s; });
  ASSERT_TRUE(run_until([&] { return answer.has_value(); }));
  EXPECT_FALSE(answer->ok());
  EXPECT_EQ(answer->error().code, store_error::kUnavailable);
  EXPECT_GE(engine_.stats().pings_refused, 1u);
}

}  // namespace
}  // namespace trainwatch::engine
