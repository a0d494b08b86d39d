// What a replica reads back of the store after each beat: the API's catalog in order
// (channels before the monitors that may name them, then maintenance windows), then who
// owns what, then the jobs; a catalog read that fails skips the part after it (which may
// name what it missed), and never ownership or the jobs. The parts followed are recorded as they are called.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cluster/replica_set.h"
#include "cluster/store_follower.h"
#include "fakes/manual_clock.h"
#include "storage/store_errors.h"

namespace trainwatch::cluster {
namespace {

// A members table that is never reached: the replica set is not started here, so it
// owns nothing and stands by for nothing.
class UnusedRegistry final : public MemberRegistry {
 public:
  Result<BeatReply> beat(const MemberRow&, bool) override {
    return make_error(store_error::kUnavailable, "members: not connected");
  }
  Status leave(const std::string&) override { return Ok{}; }
  Result<std::vector<std::string>> await_nudges(Millis) override {
    return make_error(store_error::kUnavailable, "members: not connected");
  }
};

// Peers by which this replica holds only the job "here".
class HoldsOneJob final : public jobs::JobPeers {
 public:
  jobs::JobHolding holding(const std::string& job) const override {
    jobs::JobHolding h;
    h.here = job == "here";
    return h;
  }
  std::vector<std::string> everyone_else() const override { return {}; }
  void send(std::vector<std::string>, jobs::PeerRequest, jobs::PeerDone) override {}
  void send_report(std::vector<std::string>, jobs::PeerReport, jobs::PeerReportDone) override {}
};

struct Fixture {
  testing::ManualClock local;
  DatabaseClock clock{local};
  UnusedRegistry registry;
  ReplicaSet replicas{registry, clock, "self", "host:1"};
  HoldsOneJob peers;
  std::vector<std::string> calls;
  bool channels_fail = false, monitors_fail = false;
  // What keep_jobs and analyse_standby were told of two jobs.
  std::vector<bool> kept_tests, standby_tests;

  StoreFollower follower() {
    auto read = [this](const char* what, bool fails) -> std::function<Result<bool>()> {
      return [this, what, fails]() -> Result<bool> {
        calls.emplace_back(what);
        if (fails) return make_error(store_error::kUnavailable, "the database is away");
        return true;
      };
    };
    StoreFollower::Followed followed{
        read("channels", channels_fail),
        read("monitors", monitors_fail),
        read("maintenance", false),
        [this] { calls.emplace_back("sync_ownership"); },
        [this] { calls.emplace_back("wake_outbox"); },
        [this]() -> Result<size_t> {
          calls.emplace_back("node_reports");
          return size_t{0};
        },
        [this](const StoreFollower::JobTest& writes_here, const StoreFollower::JobTest& held_here) {
          calls.emplace_back("keep_jobs");
          kept_tests = {writes_here("here"), held_here("here"), held_here("elsewhere")};
        },
        [this](const StoreFollower::JobTest& standby_only) {
          calls.emplace_back("analyse_standby");
          standby_tests = {standby_only("here")};
        },
    };
    return StoreFollower(local, replicas, peers, std::move(followed));
  }
};

TEST(StoreFollower, ReadsTheCatalogThenOwnershipThenTheJobs) {
  Fixture f;
  f.follower().follow();
  EXPECT_EQ(f.calls,
            (std::vector<std::string>{"channels", "monitors", "maintenance", "sync_ownership", "wake_outbox",
                                      "node_reports", "keep_jobs", "analyse_standby"}));
}

TEST(StoreFollower, AFailedChannelReadSkipsTheMonitorsOnly) {
  Fixture f;
  f.channels_fail = true;
  f.follower().follow();
  EXPECT_EQ(f.calls, (std::vector<std::string>{"channels", "maintenance", "sync_ownership", "wake_outbox",
                                               "node_reports", "keep_jobs", "analyse_standby"}));
  // The next beat reads the catalog again, from its start.
  f.calls.clear();
  f.channels_fail = false;
  f.follower().follow();
  EXPECT_EQ(f.calls.front(), "channels");
  EXPECT_EQ(f.calls.at(1), "monitors");
}

TEST(StoreFollower, AFailedMonitorReadSkipsTheMaintenanceWindows) {
  Fixture f;
  f.monitors_fail = true;
  f.follower().follow();
  EXPECT_EQ(f.calls, (std::vector<std::string>{"channels", "monitors", "sync_ownership", "wake_outbox",
                                               "node_reports", "keep_jobs", "analyse_standby"}));
}

TEST(StoreFollower, AsksTheReplicaSetAndThePeersWhoHoldsAJob) {
  Fixture f;
  f.follower().follow();
  // Not joined yet: the replica set owns nothing, so nothing is written or analysed here;
  // who holds a job is the peers' answer.
  EXPECT_EQ(f.kept_tests, (std::vector<bool>{false, true, false}));
  EXPECT_EQ(f.standby_tests, (std::vector<bool>{false}));
}

}  // namespace
}  // namespace trainwatch::cluster
