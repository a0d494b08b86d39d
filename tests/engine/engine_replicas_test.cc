// The engine as one of several replicas: it checks only the monitors it owns, and takes
// others over (engine.h: sync_ownership). Simulated time, a fake ownership.
#include <algorithm>
#include <optional>
#include <set>
#include <string>

#include "engine/ownership.h"
#include "engine_harness.h"
#include "storage/store_errors.h"

namespace trainwatch::engine {
namespace {

class FakeOwnership final : public Ownership {
 public:
  bool owns(std::string_view monitor) const override {
    return !lapsed_ && (all_ || owned_.count(std::string(monitor)) > 0);
  }
  const std::string& member_id() const override { return id_; }
  uint64_t term() const override { return term_; }
  bool all_ = false;
  bool lapsed_ = false;  // the lease lapsed: owns nothing until it re-joins (term_ + 1)
  uint64_t term_ = 0;
  std::set<std::string> owned_;
  std::string id_ = "self";
};

class EngineReplicas : public testing::EngineHarness {
 protected:
  EngineReplicas() { engine_.set_ownership(&ownership_); }
  void sync() {
    engine_.sync_ownership();
    settle();
  }
  FakeOwnership ownership_;
};

// The store's reads on an executor of their own, as serve puts them on a thread of their
// own: run only when a test says (run_reads), so a read takes its time.
class EngineReplicasReadingApart : public EngineReplicas {
 protected:
  EngineReplicasReadingApart() { engine_.set_store_reads(reads_.get_executor()); }
  void run_reads() {
    reads_.restart();
    reads_.poll();
    settle();
  }
  boost::asio::io_context reads_;
};

// 100 monitors that another replica checked are taken over together (it died): their
// checks stay spread over the interval, as they were, instead of all falling due together
// at every interval from then on.
TEST_F(EngineReplicas, MonitorsTakenOverTogetherKeepTheirChecksSpread) {
  for (int i = 0; i < 100; ++i)
    config_.monitors.push_back(http_monitor("svc-" + std::to_string(i), Millis(10'000)));
  start();
  sync();
  advance(Millis(15'000));
  EXPECT_TRUE(checkers_.started().empty()) << "another replica owns them";

  ownership_.all_ = true;
  sync();
  const MonoTime taken = clock_.monotonic_time();
  advance(Millis(30'000));
  std::map<int64_t, int> per_second;  // in the last 20 s: every monitor's slots, twice
  for (const auto& s : checkers_.started()) {
    const auto at = std::chrono::duration_cast<Millis>(s.at - taken).count();
    if (at >= 10'000) ++per_second[at / 1'000];
  }
  int busiest = 0;
  for (const auto& [second, count] : per_second) busiest = std::max(busiest, count);
  EXPECT_LE(busiest, 12) << "100 checks every 10 s, about 10 a second";
  EXPECT_GE(per_second.size(), 18u);
}

// The replica that checked them died: the new owner checks each when its last owner would
// have, or at its own slot if that comes first, so none waits a slot longer; never within
// the handover gap (0.5 s), while the last owner, if it lives, may not have let go yet.
TEST_F(EngineReplicas, TakenOverMonitorsAreCheckedWhenTheirDeadOwnerWouldHave) {
  // This replica's slots: api at 0 s, db at 3.33 s, web at 6.67 s of every 10 s.
  config_.monitors = {http_monitor("api", Millis(10'000)), http_monitor("db", Millis(10'000)),
                      http_monitor("web", Millis(10'000))};
  start();
  sync();
  advance(Millis(1'000));
  auto last_checked = [&](const std::string& name, Millis ago) {
    MonitorState s;
    s.status = MonitorStatus::kUp;
    s.since = clock_.system_time();
    s.last_check = clock_.system_time() - ago;
    store_.put_state(name, s);
  };
  last_checked("api", Millis(13'000));  // its owner missed the slot 3 s ago: it died
  last_checked("db", Millis(9'000));    // due in 1 s (in the gap); this replica's slot is in 2.33 s
  last_checked("web", Millis(9'500));   // due in 0.5 s; this replica's slot is in 5.67 s
  sync();

  ownership_.all_ = true;
  sync();
  const MonoTime taken = clock_.monotonic_time();
  advance(Millis(20'000));
  EXPECT_EQ(checkers_.starts_of("api", taken),
            (std::vector<Millis>{Millis(500), Millis(9'000), Millis(19'000)}))
      << "a slot its owner missed: after the gap, then at this replica's slots";
  EXPECT_EQ(checkers_.starts_of("db", taken), (std::vector<Millis>{Millis(1'000), Millis(12'333)}))
      << "its owner's slot in 1 s, then this replica's, but not the one 1.33 s after that: too close";
  EXPECT_EQ(checkers_.starts_of("web", taken),
            (std::vector<Millis>{Millis(500), Millis(5'666), Millis(15'666)}))
      << "its owner's slot in 0.5 s (right after the gap), then this replica's, half an interval on";
}

// A live owner lets a monitor go at its beat, often just after checking it: that check's
// result may not be stored yet when the new owner reads the states. A slot passed that
// recently counts as checked; checking it again right after the gap was two checks of
// one monitor within a second.
TEST_F(EngineReplicas, ASlotTheLastOwnerPassedAMomentAgoCountsAsChecked) {
  // This replica's slots: api at 0 s of every 10 s.
  config_.monitors = {http_monitor("api", Millis(10'000))};
  start();
  sync();
  advance(Millis(1'000));
  MonitorState s;
  s.status = MonitorStatus::kUp;
  s.since = clock_.system_time();
  s.last_check = clock_.system_time() - Millis(10'500);  // its slot passed 0.5 s ago, unseen
  store_.put_state("api", s);
  sync();

  ownership_.all_ = true;
  sync();
  const MonoTime taken = clock_.monotonic_time();
  advance(Millis(20'000));
  EXPECT_EQ(checkers_.starts_of("api", taken), (std::vector<Millis>{Millis(9'000), Millis(19'000)}))
      << "this replica's slots, the first 9.5 s after the owner's unseen check";
}

TEST_F(EngineReplicas, ReplicasNumberIncidentsFromBlocksTheStoreHandsOut) {
  config_.monitors = {http_monitor("api", Millis(1'000))};
  ownership_.all_ = true;
  checkers_.answer("api", false);
  ASSERT_TRUE(store_.reserve_incident_ids(500).ok());  // another replica's block: 1-500
  start();
  sync();
  advance(Millis(3'000));
  ASSERT_TRUE(view("api").open_incident.has_value());
  EXPECT_EQ(view("api").open_incident->id, 501);
}

// Every write that follows from owning a monitor carries the epoch of this replica's claim,
// and each takeover claims anew.
TEST_F(EngineReplicas, ResultsCarryTheEpochOfTheClaimTheyWereDecidedUnder) {
  config_.monitors = {http_monitor("api", Millis(1'000))};
  auto_commit_ = false;
  start();
  sync();
  EXPECT_EQ(store_.claims(), 0) << "nothing is claimed before the replica owns it";
  ownership_.all_ = true;
  sync();
  ASSERT_EQ(store_.epoch_of("api"), 1);
  advance(Millis(2'000));
  const auto* record = store_.front<RecordResult>();
  ASSERT_NE(record, nullptr);
  EXPECT_EQ(record->epoch, std::optional<int64_t>(1));
  // Committed, with the results held behind the change (written as it commits).
  while (store_.waiting() > 0) {
    store_.answer_all(Ok{});
    settle();
  }

  ownership_.all_ = false;  // it moves away and comes back: a new claim, a new epoch
  sync();
  ownership_.all_ = true;
  sync();
  EXPECT_EQ(store_.epoch_of("api"), 2);
  advance(Millis(2'000));
  record = store_.front<RecordResult>();
  ASSERT_NE(record, nullptr);
  EXPECT_EQ(record->epoch, std::optional<int64_t>(2));
}

// Another replica claimed the monitor while this one was deciding a DOWN: the store refuses
// the change. It is dropped, never retried, and this replica stops checking the monitor
// until it claims it again, which it does under a new epoch.
TEST_F(EngineReplicas, AFencedChangeIsDroppedAndTheMonitorClaimedAgainBeforeItIsCheckedAgain) {
  config_.monitors = {http_monitor("api", Millis(1'000))};
  ownership_.all_ = true;
  auto_commit_ = false;
  checkers_.answer("api", false);
  start();
  sync();
  advance(Millis(2'000));
  const auto* change = store_.front<RecordResult>();
  ASSERT_NE(change, nullptr);
  ASSERT_TRUE(change->opened.has_value()) << "a DOWN that opens an incident";
  ASSERT_TRUE(store_.answer(make_error(store_error::kFenced, "fenced: a newer epoch")));
  settle();
  EXPECT_NE(view("api").state.status, MonitorStatus::kDown) << "a refused change is never shown";
  const size_t checks = checkers_.started().size();
  advance(Millis(5'000));
  EXPECT_EQ(store_.waiting(), 0u) << "nothing retried under the old epoch";
  EXPECT_EQ(checkers_.started().size(), checks) << "not checked again before a new claim";

  sync();  // the next beat: it still owns it, and claims it again
  EXPECT_EQ(store_.epoch_of("api"), 2);
  advance(Millis(3'000));
  EXPECT_GT(checkers_.started().size(), checks);
  const auto* again = store_.front<RecordResult>();
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->epoch, std::optional<int64_t>(2));
}

// A replica whose lease lapsed (paused longer than it, or cut off from the database) starts
// no check from that instant, before any sync; when it re-joins it lets go of all it owned
// and claims it again under new epochs.
TEST_F(EngineReplicas, ALapsedLeaseStopsChecksAtOnceAndARejoinClaimsEverythingAnew) {
  config_.monitors = {http_monitor("api", Millis(1'000)), http_monitor("db", Millis(1'000))};
  ownership_.all_ = true;
  start();
  sync();
  advance(Millis(3'000));
  ASSERT_EQ(store_.epoch_of("api"), 1);
  ownership_.lapsed_ = true;
  const size_t checks = checkers_.started().size();
  advance(Millis(10'000));
  EXPECT_EQ(checkers_.started().size(), checks) << "checked after the lease lapsed";

  ownership_.lapsed_ = false;
  ++ownership_.term_;
  sync();
  EXPECT_EQ(store_.epoch_of("api"), 2);
  EXPECT_EQ(store_.epoch_of("db"), 2);
  advance(Millis(3'000));
  EXPECT_GT(checkers_.started().size(), checks);
}

// The store's reads run where serve puts them (a thread of their own), never on the io
// thread: while a heartbeat's stored pings cannot be read (heartbeat_pings locked), the
// checks go on at their slots, the heartbeat's deadline gets no verdict from a read that
// failed (tried again every second, and stats() says since when), and once the read
// works the missed deadline is judged as usual.
TEST_F(EngineReplicasReadingApart, AHeartbeatWhosePingsCannotBeReadHoldsUpNoCheckAndGetsNoVerdictMeanwhile) {
  config_.monitors = {http_monitor("api", Millis(1'000)),
                      heartbeat_monitor("nightly", Millis(2'000), Millis(1'000))};
  ownership_.all_ = true;
  start();
  sync();
  EXPECT_EQ(store_.claims(), 0) << "the claim waits for the reads' thread";
  run_reads();
  ASSERT_EQ(store_.epoch_of("nightly"), 1);
  Ping ping;
  ping.at = clock_.system_time();
  engine_.record_ping("nightly", ping, {});  // a finish: due 2 s later, missed 1 s after that
  settle();
  store_.fail_ping_reads(make_error(store_error::kRead, "canceling statement due to lock timeout"));

  const MonoTime locked = clock_.monotonic_time();
  advance(Millis(5'000));  // the deadline (3 s) passed; its read has not even run
  EXPECT_GE(checkers_.starts_of("api", locked).size(), 4u) << "the checks went on";
  EXPECT_NE(view("nightly").state.status, MonitorStatus::kDown);
  run_reads();  // the read fails
  advance(Millis(3'000));
  run_reads();
  EXPECT_NE(view("nightly").state.status, MonitorStatus::kDown) << "no verdict from a read that failed";
  ASSERT_TRUE(engine_.stats().pings_unreadable_since.has_value());
  EXPECT_NE(engine_.stats().pings_unreadable_reason.find("lock timeout"), std::string::npos);

  store_.fail_ping_reads(std::nullopt);
  advance(Millis(1'000));  // the retry reads them
  run_reads();
  EXPECT_FALSE(engine_.stats().pings_unreadable_since.has_value());
  // No ping was stored: missed, as late as the pings could not be read (engine.h, "Store
  // outages and heartbeats").
  for (int s = 0; s < 10 && view("nightly").state.status != MonitorStatus::kDown; ++s) {
    advance(Millis(1'000));
    run_reads();
  }
  ASSERT_EQ(view("nightly").state.status, MonitorStatus::kDown);
  EXPECT_NE(view("nightly").open_incident->cause.find("moved"), std::string::npos)
      << view("nightly").open_incident->cause;
}

// heartbeat_pings locked: a ping sent to another replica meanwhile is stored only once the
// lock goes, and may be read here after the outage has ended. It counts from when it came,
// moved by the rest of the outage like every other deadline, so a heartbeat pinged during
// the lock is not DOWN as the lock ends; silent after it, it is DOWN once that moved
// deadline passes.
TEST_F(EngineReplicasReadingApart, APingStoredWhileThePingsWereLockedCountsFromWhenItCame) {
  auto step = [&](int seconds) {
    for (int s = 0; s < seconds; ++s) {
      advance(Millis(1'000));
      run_reads();
    }
  };
  // "often" is due first: its deadline's read meets the lock. "nightly" is the one judged.
  config_.monitors = {heartbeat_monitor("often", Millis(2'000), Millis(1'000)),
                      heartbeat_monitor("nightly", Millis(10'000), Millis(1'000))};
  ownership_.all_ = true;
  start();
  sync();
  run_reads();
  Ping ping;
  ping.at = clock_.system_time();
  engine_.record_ping("often", ping, {});
  engine_.record_ping("nightly", ping, {});  // due 10 s later, missed 1 s after that
  settle();
  store_.fail_ping_reads(make_error(store_error::kRead, "canceling statement due to lock timeout"));
  step(5);  // often's read failed at 3 s: the outage is on
  ASSERT_TRUE(engine_.stats().pings_unreadable_since.has_value());

  // Pinged to the other replica now, 5 s in, and held up in its writer by the lock.
  PingRecord held;
  held.monitor = "nightly";
  held.ping.at = clock_.system_time();
  step(3);
  store_.fail_ping_reads(std::nullopt);  // the lock goes at 8 s; often's retry reads, the outage ends
  step(2);
  ASSERT_FALSE(engine_.stats().pings_unreadable_since.has_value());
  HeartbeatMarks marks;  // the held ping committed once the lock went
  marks.last_ping = held;
  marks.last_finish = held;
  store_.store_marks("nightly", marks);
  // nightly's deadline, 11 s moved by the outage (about 3 s to 10 s), reads the held ping:
  // due then at 5 + 11 s, moved by the outage after it (about 5 s): about 21 s.
  step(9);
  EXPECT_NE(view("nightly").state.status, MonitorStatus::kDown)
      << "DOWN after a ping that came during the lock: " << view("nightly").open_incident->cause;
  int seconds = 0;
  for (; seconds < 10 && view("nightly").state.status != MonitorStatus::kDown; ++seconds) step(1);
  ASSERT_EQ(view("nightly").state.status, MonitorStatus::kDown) << "silent after the lock";
}

}  // namespace
}  // namespace trainwatch::engine
