// EngineHarness: an engine::Engine in simulated time. The ManualClock is its clock and its
// timers; FakeCheckers answer its checks; FakeStore holds its writes, which the harness
// commits as they come unless a test answers them itself (auto_commit = false).
//
// advance(d) moves time the way the running program does: each timer that falls due
// fires, and what it posted to the io thread (a check's answer, a commit's answer) runs
// before the next one fires.
#pragma once

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include "engine/engine.h"
#include "fakes/fake_checkers.h"
#include "fakes/fake_store.h"
#include "fakes/manual_clock.h"

namespace trainwatch::testing {

class EngineHarness : public ::testing::Test {
 protected:
  EngineHarness() : checkers_(clock_, clock_), engine_(io_, clock_, clock_, store_, checkers_) {}

  static MonitorConfig http_monitor(const std::string& name, Millis interval, int retries = 0) {
    MonitorConfig m;
    m.name = name;
    m.interval = interval;
    m.retries = retries;
    HttpCheckSpec spec;
    spec.url = "http://127.0.0.1:9/" + name;
    m.spec = spec;
    return m;
  }
  static MonitorConfig heartbeat_monitor(const std::string& name, Millis period, Millis grace) {
    MonitorConfig m;
    m.name = name;
    m.type = MonitorType::kHeartbeat;
    HeartbeatSpec spec;
    spec.period = period;
    spec.grace = grace;
    m.spec = spec;
    return m;
  }

  // Starts the engine on config_ and notes when, for the offsets tests compare.
  void start() {
    origin_ = clock_.monotonic_time();
    ASSERT_TRUE(engine_.start(config_).ok());
    settle();
  }

  void advance(Millis d) {
    const MonoTime target = clock_.monotonic_time() + d;
    settle();
    while (auto next = clock_.next_deadline()) {
      if (*next > target) break;
      clock_.advance(std::max(Millis(0), std::chrono::ceil<Millis>(*next - clock_.monotonic_time())));
      settle();
    }
    clock_.advance(std::chrono::ceil<Millis>(target - clock_.monotonic_time()));
    settle();
  }

  // Runs what was posted to the io thread, committing writes as they come (auto_commit_).
  void settle() {
    for (;;) {
      io_.restart();  // it stops whenever it runs out of work
      bool progressed = io_.poll() > 0;
      while (auto_commit_ && store_.answer(Ok{})) progressed = true;
      if (!progressed) return;
    }
  }

  // Pauses or resumes `name` and waits for the answer: once the new state is committed.
  void set_paused(const std::string& name, bool paused) {
    std::optional<Status> answered;
    engine_.set_paused(name, paused, [&](const Status& s) { answered = s; });
    settle();
    ASSERT_TRUE(answered.has_value()) << "no answer once settled";
    ASSERT_TRUE(answered->ok()) << answered->error().message;
  }

  engine::MonitorView view(const std::string& name) const {
    auto v = engine_.monitor(name);
    EXPECT_TRUE(v.has_value()) << name;
    return v.value_or(engine::MonitorView{});
  }

  boost::asio::io_context io_;
  ManualClock clock_;
  FakeStore store_;
  FakeCheckers checkers_;
  engine::Engine engine_;
  Config config_;
  MonoTime origin_{};
  bool auto_commit_ = true;
};

}  // namespace trainwatch::testing
