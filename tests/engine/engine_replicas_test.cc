// The engine as one of several replicas: it checks only the monitors it owns, and takes
// others over (engine.h: sync_ownership). Simulated time, a fake ownership.
#include <algorithm>
#include <set>
#include <string>

#include "engine/ownership.h"
#include "engine_harness.h"

namespace trainwatch::engine {
namespace {

class FakeOwnership final : public Ownership {
 public:
  bool owns(std::string_view monitor) const override {
    return all_ || owned_.count(std::string(monitor)) > 0;
  }
  bool all_ = false;
  std::set<std::string> owned_;
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
// have, or at its own slot if that comes first, so none waits a slot longer.
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
  last_checked("api", Millis(12'000));  // its owner missed the slot 2 s ago
  last_checked("db", Millis(9'000));    // due in 1 s; this replica's slot is in 2.33 s
  last_checked("web", Millis(9'500));   // due in 0.5 s; this replica's slot is in 5.67 s
  sync();

  ownership_.all_ = true;
  sync();
  const MonoTime taken = clock_.monotonic_time();
  advance(Millis(20'000));
  EXPECT_EQ(checkers_.starts_of("api", taken),
            (std::vector<Millis>{Millis(0), Millis(9'000), Millis(19'000)}))
      << "at once, then at this replica's slots";
  EXPECT_EQ(checkers_.starts_of("db", taken), (std::vector<Millis>{Millis(1'000), Millis(12'333)}))
      << "its slot 1.33 s later is skipped";
  EXPECT_EQ(checkers_.starts_of("web", taken),
            (std::vector<Millis>{Millis(500), Millis(5'666), Millis(15'666)}))
      << "its slot, more than half an interval later, is kept";
}

TEST_F(EngineReplicas, ReplicasNumberIncidentsFromBlocksTheStoreHandsOut) {
  config_.monitors = {http_monitor("api", Millis(1'000))};
  ownership_.all_ = true;
  checkers_.answer("api", false);
  ASSERT_TRUE(store_.reserve_incident_ids(500).ok());  // another replica's block: 1-500
  start();
  sync();
  advance(Millis(2'000));
  ASSERT_TRUE(view("api").open_incident.has_value());
  EXPECT_EQ(view("api").open_incident->id, 501);
}

}  // namespace
}  // namespace trainwatch::engine
