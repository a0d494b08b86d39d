// Who may own monitors, and who owns each: the same answer on every replica.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "cluster/membership.h"

namespace trainwatch::cluster {
namespace {

MemberRow row(std::string id, int joined_s, int seen_s, std::string config = "c1") {
  return {std::move(id), "host:1", std::move(config), Millis(joined_s * 1'000), Millis(seen_s * 1'000)};
}

Config with_monitors(std::vector<std::string> names) {
  Config config;
  for (auto& name : names) {
    MonitorConfig m;
    m.name = std::move(name);
    config.monitors.push_back(std::move(m));
  }
  return config;
}

TEST(Membership, LiveSettledMembersAreEligibleAndSilentOnesAreNot) {
  const std::vector<MemberRow> rows = {row("c", 60, 0), row("a", 60, 1), row("b", 60, 7), row("d", 1, 0)};
  // b has not beaten for 7 s (> 6 s); d joined a second ago and has not settled.
  EXPECT_EQ(eligible_members(rows), (std::vector<std::string>{"a", "c"}));
}

TEST(Membership, TheFirstMemberOfAnEmptyInstallationOwnsAtOnce) {
  EXPECT_EQ(eligible_members({row("a", 0, 0)}), std::vector<std::string>{"a"});
  // Beside a dead member it is still alone among the live.
  EXPECT_EQ(eligible_members({row("a", 0, 0), row("dead", 100, 30)}), std::vector<std::string>{"a"});
  // Beside a live one, it waits to settle, like any newcomer.
  EXPECT_EQ(eligible_members({row("a", 0, 0), row("b", 100, 0)}), std::vector<std::string>{"b"});
}

TEST(Membership, ReplicasStartedTogetherAreNeverLeftWithoutAnOwner) {
  // Neither has settled: the eldest owns everything until the other has.
  EXPECT_EQ(eligible_members({row("b", 2, 0), row("a", 1, 0)}), std::vector<std::string>{"b"});
  EXPECT_EQ(eligible_members({row("b", 1, 0), row("a", 1, 0)}), std::vector<std::string>{"a"})
      << "a tie: the smaller id";
  EXPECT_EQ(eligible_members({row("b", 3, 0), row("a", 1, 0)}), std::vector<std::string>{"b"});
}

TEST(Membership, ANewlyEligibleMemberActsOnlyOnceEveryLiveMemberBeatSinceItSettled) {
  // n joined 4 s ago, eligible for 1 s: a beat 0.5 s ago has read that; 1.5 s ago has not.
  EXPECT_TRUE(handed_over({row("n", 4, 0), {"a", "host:1", "c1", Millis(60'000), Millis(500)}}, "n"));
  EXPECT_FALSE(handed_over({row("n", 4, 0), {"a", "host:1", "c1", Millis(60'000), Millis(1'500)}}, "n"));
  // A member not live any more holds nothing (its lease lapsed before its row expired).
  EXPECT_TRUE(handed_over({row("n", 4, 0), row("dead", 60, 7)}, "n"));
  // The eldest of unsettled members, owning all, acts at once; a long-settled member too.
  EXPECT_TRUE(handed_over({row("n", 1, 0), row("m", 0, 0)}, "n"));
  EXPECT_TRUE(handed_over({row("n", 600, 0), row("a", 60, 1)}, "n"));
  EXPECT_FALSE(handed_over({row("a", 60, 0)}, "n")) << "not a member";
}

// A replica whose beats crawl stands down at the first beat over 2 s and stands up only
// after 10 s of beats under 1 s each: beats between 1 and 2 s keep it where it is, so a
// link that is slow now and then does not make it flap.
TEST(Membership, AReplicaStandsDownAtASlowBeatAndUpOnlyAfterTenSecondsOfQuickOnes) {
  const MonoTime t0{};
  auto at = [&](int ms) { return t0 + Millis(ms); };
  Fitness f;
  note_beat(f, at(0), at(1'500));
  EXPECT_TRUE(f.fit) << "1.5 s: slow, but inside the band";
  note_beat(f, at(2'000), at(4'100));
  EXPECT_FALSE(f.fit) << "2.1 s: stands down";
  for (int s = 5; s < 14; ++s) note_beat(f, at(s * 1'000), at(s * 1'000 + 300));
  EXPECT_FALSE(f.fit) << "quick beats for 8.3 s: not yet";
  note_beat(f, at(14'000), at(15'200));
  EXPECT_FALSE(f.fit) << "a beat of 1.2 s restarts the count";
  for (int s = 16; s < 26; ++s) note_beat(f, at(s * 1'000), at(s * 1'000 + 300));
  EXPECT_FALSE(f.fit) << "9.3 s of quick beats since the count restarted";
  note_beat(f, at(26'000), at(26'300));
  EXPECT_TRUE(f.fit) << "10.3 s of quick beats";
}

// The others hand no monitor to a member that stands down, as long as one that stands up
// has settled; when every settled member stands down (the database is slow), they act.
TEST(Membership, MembersThatStandDownOwnNothingWhileAnotherStandsUp) {
  MemberRow slow = row("b", 60, 0);
  slow.fit = false;
  EXPECT_EQ(eligible_members({row("a", 60, 0), slow, row("c", 60, 0)}), (std::vector<std::string>{"a", "c"}));
  MemberRow also_slow = row("a", 60, 0);
  also_slow.fit = false;
  EXPECT_EQ(eligible_members({also_slow, slow, row("c", 1, 0)}), (std::vector<std::string>{"a", "b"}))
      << "c stands up but has not settled";
}

TEST(Membership, EveryMonitorHasOneOwnerAndTheyShareThemEvenly) {
  const std::vector<std::string> members = {"r1", "r2", "r3"};
  std::map<std::string, int> owned;
  for (int i = 0; i < 3'000; ++i) owned[std::string(owner_of("monitor-" + std::to_string(i), members))]++;
  ASSERT_EQ(owned.size(), 3u);
  for (const auto& [member, count] : owned) {
    EXPECT_GT(count, 850) << member;  // 1,000 each, give or take the hash
    EXPECT_LT(count, 1'150) << member;
  }
  EXPECT_EQ(owner_of("anything", {}), "");
}

TEST(Membership, AMemberLeavingMovesOnlyItsOwnMonitors) {
  const std::vector<std::string> three = {"r1", "r2", "r3"};
  const std::vector<std::string> two = {"r1", "r3"};
  int moved = 0;
  for (int i = 0; i < 1'000; ++i) {
    const std::string name = "monitor-" + std::to_string(i);
    const std::string before(owner_of(name, three));
    const std::string after(owner_of(name, two));
    if (before != "r2") {
      EXPECT_EQ(before, after) << name;
    } else {
      ++moved;
    }
  }
  EXPECT_GT(moved, 250);
}

// A job's reports are applied by its owner and its standby; when the owner leaves, the
// standby must be who takes the job over, or the new owner would start without its state.
TEST(Membership, WhenAnOwnerLeavesItsStandbyOwnsWhatItOwned) {
  const std::vector<std::string> three = {"r1", "r2", "r3"};
  for (int i = 0; i < 1'000; ++i) {
    const std::string job = "job-" + std::to_string(i);
    const Holders holders = holders_of(job, three);
    ASSERT_FALSE(holders.standby.empty());
    ASSERT_NE(holders.owner, holders.standby);
    EXPECT_EQ(holders.owner, owner_of(job, three));
    std::vector<std::string> left;
    for (const auto& m : three) {
      if (m != holders.owner) left.push_back(m);
    }
    EXPECT_EQ(owner_of(job, left), holders.standby) << job;
  }
  const std::vector<std::string> one = {"r1"};  // the holders are views into it
  const Holders alone = holders_of("job", one);
  EXPECT_EQ(alone.owner, "r1");
  EXPECT_EQ(alone.standby, "");
}

TEST(Membership, ReplicasWithOtherMonitorsAreFoundAndTheOrderOfTheFileDoesNotMatter) {
  const std::string ab = config_fingerprint(with_monitors({"a", "b"}));
  EXPECT_EQ(ab.size(), 16u);
  EXPECT_EQ(config_fingerprint(with_monitors({"b", "a"})), ab);
  EXPECT_NE(config_fingerprint(with_monitors({"a", "b", "c"})), ab);
  EXPECT_NE(config_fingerprint(with_monitors({"ab"})), config_fingerprint(with_monitors({"a", "b"})));

  const std::vector<MemberRow> rows = {row("r1", 60, 0, ab), row("r2", 60, 0, "other"),
                                       row("gone", 60, 30, "older")};
  const auto others = other_configs(rows, ab);
  ASSERT_EQ(others.size(), 1u);  // the dead member's config does not matter any more
  EXPECT_EQ(others[0]->id, "r2");
}

TEST(Membership, WeightsAreTheSameOnEveryBuild) {
  // Replicas of different builds or platforms must agree, so the weights are pinned
  // (FNV-1a 64 and splitmix64's finalizer, computed apart from this code).
  EXPECT_EQ(rendezvous_weight("", ""), 0xcfa3c5eb015b4663ULL);
  EXPECT_EQ(rendezvous_weight("api-health", "0123456789abcdef"), 0x2a63dd72bc3eac11ULL);
}

}  // namespace
}  // namespace trainwatch::cluster
