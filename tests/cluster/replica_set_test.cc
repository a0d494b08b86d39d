// The replica set's lease: a replica owns nothing once kLease has passed on its own clock
// since the start of its last successful beat, and the beat after that re-joins as new.
// The clock is a ManualClock; the registry a fake that answers as the members table would.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cluster/membership.h"
#include "cluster/replica_set.h"
#include "fakes/manual_clock.h"
#include "storage/store_errors.h"

namespace trainwatch::cluster {
namespace {

// The members table of an installation where this replica is alone: each beat returns
// its row, joined anew when the beat re-joins.
// Its database's clock runs `database_ahead` ahead of the test's wall clock.
class LoneRegistry final : public MemberRegistry {
 public:
  LoneRegistry(const testing::ManualClock& clock, Millis database_ahead = Millis(0))
      : clock_(clock), database_ahead_(database_ahead) {}
  Result<BeatReply> beat(const MemberRow& self, bool rejoin) override {
    std::lock_guard lock(mu_);
    rejoins_.push_back(rejoin);
    if (failing_) return make_error(store_error::kUnavailable, "members: the connection is cut");
    MemberRow row = self;
    row.joined_age = rejoin ? Millis(0) : Millis(60'000);
    return BeatReply{{row}, database_time(), std::chrono::microseconds(500)};
  }
  // What the database's clock says: the wall clock as the test started, plus the time
  // the test moved since (the monotonic clock), plus database_ahead.
  SystemTime database_time() const {
    return start_wall_ + (clock_.monotonic_time() - start_mono_) + database_ahead_;
  }
  Status leave(const std::string&) override { return Ok{}; }
  Result<std::vector<std::string>> await_nudges(Millis) override {
    return make_error(store_error::kUnavailable, "members: not connected");
  }
  std::vector<bool> rejoins() const {
    std::lock_guard lock(mu_);
    return rejoins_;
  }
  void fail(bool failing) {
    std::lock_guard lock(mu_);
    failing_ = failing;
  }

 private:
  const testing::ManualClock& clock_;
  const Millis database_ahead_;
  const SystemTime start_wall_ = clock_.system_time();
  const MonoTime start_mono_ = clock_.monotonic_time();
  mutable std::mutex mu_;
  std::vector<bool> rejoins_;
  bool failing_ = false;
};

// Polls `done` for up to 10 s of real time: the replica set beats on its own thread.
template <typename Done>
bool eventually(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

TEST(ReplicaSetLease, AReplicaOwnsNothingOnceItsLeaseLapsedAndReJoinsAsNewAtItsNextBeat) {
  testing::ManualClock local;
  DatabaseClock clock(local);
  LoneRegistry registry(local);
  ReplicaSet replicas(registry, clock, "self", "host:1");
  ASSERT_TRUE(replicas.start([](bool) {}, [](const std::string&) {}).ok());
  ASSERT_TRUE(replicas.owns("api")) << "alone, it owns every monitor";

  // Paused, or its beats blocked: no beat for longer than the lease on its own clock.
  registry.fail(true);
  local.advance(kLease - Millis(1));
  EXPECT_TRUE(replicas.owns("api"));
  local.advance(Millis(1));
  EXPECT_FALSE(replicas.owns("api")) << "kLease after its last good beat started, with no beat since";
  EXPECT_EQ(replicas.term(), 0u);

  // The database answers again: the next beat re-joins, and the term moves.
  registry.fail(false);
  ASSERT_TRUE(eventually([&] { return replicas.term() == 1; })) << "no re-join";
  const auto rejoins = registry.rejoins();
  EXPECT_FALSE(rejoins.front()) << "the first beat joins plainly";
  EXPECT_TRUE(rejoins.back());
  EXPECT_TRUE(replicas.owns("api")) << "alone again, it owns at once, as a fresh start does";
  replicas.stop();
}

TEST(ReplicaSetLease, OnceItsLeaseLapsedBecauseItsBeatsFailItSaysWhyUntilOneWorks) {
  testing::ManualClock local;
  DatabaseClock clock(local);
  LoneRegistry registry(local);
  ReplicaSet replicas(registry, clock, "self", "host:1");
  ASSERT_TRUE(replicas.start([](bool) {}, [](const std::string&) {}).ok());
  EXPECT_EQ(replicas.trouble(), std::nullopt);

  registry.fail(true);
  const size_t beats = registry.rejoins().size();
  ASSERT_TRUE(eventually([&] { return registry.rejoins().size() > beats; })) << "no beat on the thread";
  EXPECT_EQ(replicas.trouble(), std::nullopt) << "a failed beat within the lease: it still acts";
  local.advance(kLease);
  EXPECT_EQ(replicas.trouble(), "members: the connection is cut");

  registry.fail(false);
  ASSERT_TRUE(eventually([&] { return !replicas.trouble(); })) << "a beat that works ends it";
  replicas.stop();
}

// This replica just settled beside an old member, whose last beat the test sets.
class BesideAnOldMember final : public MemberRegistry {
 public:
  Result<BeatReply> beat(const MemberRow& self, bool) override {
    std::lock_guard lock(mu_);
    MemberRow mine = self;
    mine.joined_age = Millis(4'000);  // eligible for 1 s
    return BeatReply{{{"old", "host:2", self.config, Millis(600'000), old_seen_age_}, mine}, {}, {}};
  }
  Status leave(const std::string&) override { return Ok{}; }
  Result<std::vector<std::string>> await_nudges(Millis) override {
    return make_error(store_error::kUnavailable, "members: not connected");
  }
  void old_beat_ago(Millis age) {
    std::lock_guard lock(mu_);
    old_seen_age_ = age;
  }

 private:
  std::mutex mu_;
  Millis old_seen_age_{1'500};
};

TEST(ReplicaSetHandover, ANewlyEligibleReplicaOwnsNothingUntilTheOldOwnerHasBeatenSince) {
  testing::ManualClock local;
  DatabaseClock clock(local);
  BesideAnOldMember registry;
  ReplicaSet replicas(registry, clock, "new", "host:1");
  auto owns_any = [&] {
    for (int i = 0; i < 32; ++i) {
      if (replicas.owns("monitor-" + std::to_string(i))) return true;
    }
    return false;
  };
  ASSERT_TRUE(replicas.start([](bool) {}, [](const std::string&) {}).ok());
  EXPECT_EQ(replicas.members(), (std::vector<std::string>{"new", "old"}));
  EXPECT_FALSE(owns_any()) << "the old member last beat before this one became eligible: it may still check";
  registry.old_beat_ago(Millis(500));  // it beat since, and let go
  EXPECT_TRUE(eventually(owns_any));
  replicas.stop();
}

// Every beat reads the database's clock: what the replica stamps is the database's time,
// whatever its host's wall clock does meanwhile.
TEST(ReplicaSetClock, AReplicaKeepsTheDatabasesTimeWhenItsWallClockIsWrongOrSteps) {
  testing::ManualClock local;
  DatabaseClock clock(local);
  LoneRegistry registry(local, std::chrono::hours(1));  // this host's clock is an hour slow
  ReplicaSet replicas(registry, clock, "self", "host:1");
  ASSERT_TRUE(replicas.start([](bool) {}, [](const std::string&) {}).ok());
  EXPECT_EQ(clock.system_time(), registry.database_time())
      << "set by the first beat, before it owns anything";
  EXPECT_EQ(clock.wall_clock_ahead(), -std::chrono::hours(1));

  local.step_wall_clock(-std::chrono::hours(24));  // `date -s yesterday`
  local.advance(Millis(700));
  EXPECT_EQ(clock.system_time(), registry.database_time()) << "the step is not seen; the time runs on";
  EXPECT_TRUE(replicas.owns("api")) << "and it goes on acting";
  replicas.stop();
}

TEST(ReplicaSetLease, TheLeaseEndsBeforeTheOthersMayTakeOver) {
  EXPECT_LT(kLease + kLeaseMargin, kMemberTtl + Millis(1));
  EXPECT_GE(kLeaseMargin, kBeatEvery) << "a margin of at least one beat";
  const MonoTime start{};
  EXPECT_TRUE(lease_valid(start, start + kLease - Millis(1)));
  EXPECT_FALSE(lease_valid(start, start + kLease));
}

}  // namespace
}  // namespace trainwatch::cluster
