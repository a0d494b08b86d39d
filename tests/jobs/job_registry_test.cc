// The registry's bounds on a manual clock: ranks per job and per node, released idle
// auto-created jobs, bounded snapshots of huge jobs.
#include <gtest/gtest.h>

#include "fakes/manual_clock.h"
#include "jobs/job_registry.h"
#include "jobs/rank_health.h"
#include "jobs/rank_reports.h"
#include "jobs/rank_set.h"

namespace trainwatch::jobs {
namespace {

using testing::ManualClock;

// A training rank (rank_reports.h) with this file's pids, its last step `step_age_ms` ago.
RankReport training(int rank, int64_t step, int64_t step_age_ms = 0) {
  RankReport r = testing::training(rank, step);
  r.pid = 1000 + rank;
  r.last_step_age_ms = step_age_ms;
  return r;
}

NodeReport node_report(const std::string& node, int first_rank, int count, int64_t step = 10,
                       int64_t step_age_ms = 0) {
  NodeReport r;
  r.node = node;
  r.report_every = Millis(1'000);
  for (int i = 0; i < count; ++i) r.ranks.push_back(training(first_rank + i, step, step_age_ms));
  return r;
}

class Registry : public ::testing::Test {
 protected:
  Registry() : registry_(clock_) {
    config_.jobs.auto_create = true;
    configure();
    registry_.set_on_expired([this](const std::string& job) { released_.push_back(job); });
  }
  void configure() { registry_.configure(config_); }

  ManualClock clock_;
  Config config_;
  JobRegistry registry_;
  std::vector<std::string> released_;
};

TEST_F(Registry, AReportPastMaxRanksIsRefusedWholeNamingTheBound) {
  config_.jobs.max_ranks = 2'000;
  configure();
  EXPECT_EQ(registry_.ingest("big", node_report("node-0", 0, 1'000)).outcome, IngestOutcome::kCreated);
  EXPECT_EQ(registry_.ingest("big", node_report("node-1", 1'000, 1'000)).outcome, IngestOutcome::kAccepted);
  const IngestResult refused = registry_.ingest("big", node_report("node-2", 2'000, 1));
  EXPECT_EQ(refused.outcome, IngestOutcome::kTooManyRanks);
  EXPECT_EQ(refused.bound, "jobs.max_ranks");
  EXPECT_EQ(refused.limit, 2'000u);
  EXPECT_EQ(refused.actual, 2'001u);
  EXPECT_EQ(registry_.snapshot("big")->rank_count, 2'000u) << "nothing of the refused report is applied";
  EXPECT_EQ(registry_.refusals().too_many_ranks, 1u);
  EXPECT_EQ(registry_.ingest("big", node_report("node-0", 0, 1'000, 11)).outcome, IngestOutcome::kAccepted)
      << "known ranks still report";
}

TEST_F(Registry, ADeclaredWorldSizeIsTheCapAndNamesTheRanks) {
  MonitorConfig m;
  m.name = "llama";
  m.type = MonitorType::kJob;
  JobCheckSpec spec;
  spec.world_size = 4;
  m.spec = spec;
  config_.monitors.push_back(m);
  configure();
  EXPECT_EQ(registry_.ingest("llama", node_report("node-0", 0, 4)).outcome, IngestOutcome::kAccepted);
  const IngestResult refused = registry_.ingest("llama", node_report("node-1", 4, 1));
  EXPECT_EQ(refused.outcome, IngestOutcome::kTooManyRanks);
  EXPECT_EQ(refused.bound, "world_size");
  EXPECT_EQ(refused.limit, 4u);
}

// A declared job is pending, neither up nor down, until its first report; then it is judged.
TEST_F(Registry, ADeclaredJobIsPendingUntilItsFirstReport) {
  MonitorConfig m;
  m.name = "llama";
  m.type = MonitorType::kJob;
  JobCheckSpec spec;
  spec.world_size = 2;
  m.spec = spec;
  config_.monitors.push_back(m);
  configure();
  EXPECT_TRUE(registry_.evaluate(m).pending);

  ASSERT_EQ(registry_.ingest("llama", node_report("node-0", 0, 2)).outcome, IngestOutcome::kAccepted);
  const CheckResult reported = registry_.evaluate(m);
  EXPECT_FALSE(reported.pending);
  EXPECT_TRUE(reported.ok) << reported.cause;
  EXPECT_TRUE(reported.labels.empty());
}

// Down, its result names the culprit in the alert labels' vocabulary (jobs/culprit_labels.h).
TEST_F(Registry, ADownJobsResultNamesTheCulpritAsLabels) {
  MonitorConfig m;
  m.name = "llama";
  m.type = MonitorType::kJob;
  JobCheckSpec spec;
  spec.world_size = 2;
  m.spec = spec;
  config_.monitors.push_back(m);
  configure();
  ASSERT_EQ(registry_.ingest("llama", node_report("node-0", 0, 2)).outcome, IngestOutcome::kAccepted);
  EXPECT_TRUE(registry_.evaluate(m).ok);
  clock_.advance(Millis(1'000));
  NodeReport gone = node_report("node-0", 0, 2, 11);
  gone.ranks[1] = testing::exited(gone.ranks[1], -1, 9);
  ASSERT_EQ(registry_.ingest("llama", gone).outcome, IngestOutcome::kAccepted);
  const CheckResult down = registry_.evaluate(m);
  ASSERT_FALSE(down.ok) << down.cause;
  EXPECT_FALSE(down.pending);
  EXPECT_EQ(down.labels, (std::vector<std::pair<std::string, std::string>>{
                             {"reason", "rank_gone"}, {"rank", "1"}, {"node", "node-0"}}))
      << down.cause;
}

// Past its start-up timeout without a report, it is down, not pending.
TEST_F(Registry, ADeclaredJobWithNoReportPastItsStartupTimeoutIsDown) {
  MonitorConfig m;
  m.name = "llama";
  m.type = MonitorType::kJob;
  JobCheckSpec spec;
  spec.world_size = 2;
  spec.thresholds.startup_timeout = Millis(60'000);
  m.spec = spec;
  config_.monitors.push_back(m);
  configure();
  EXPECT_TRUE(registry_.evaluate(m).pending);
  clock_.advance(Millis(61'000));
  const CheckResult late = registry_.evaluate(m);
  EXPECT_FALSE(late.pending);
  EXPECT_FALSE(late.ok);
  EXPECT_NE(late.cause.find("start-up timeout"), std::string::npos) << late.cause;
}

TEST_F(Registry, ANodeWithMoreRanksThanMaxRanksPerNodeIsRefusedAndCreatesNoJob) {
  config_.jobs.max_ranks_per_node = 8;
  configure();
  const IngestResult refused = registry_.ingest("wide", node_report("node-0", 0, 9));
  EXPECT_EQ(refused.outcome, IngestOutcome::kTooManyRanksOnNode);
  EXPECT_EQ(refused.bound, "jobs.max_ranks_per_node");
  EXPECT_EQ(refused.actual, 9u);
  EXPECT_TRUE(registry_.names().empty());
  EXPECT_EQ(registry_.refusals().too_many_ranks_on_node, 1u);
}

TEST_F(Registry, AnIdleAutoCreatedJobIsReleasedAndARecreatedOneStartsAfresh) {
  config_.jobs.expire_after = Millis(60'000);
  configure();
  ASSERT_EQ(registry_.ingest("run-1", node_report("node-0", 0, 2)).outcome, IngestOutcome::kCreated);
  clock_.advance(Millis(59'000));
  registry_.evaluate(registry_.auto_monitor("run-1"));
  EXPECT_TRUE(released_.empty()) << "not idle long enough";
  clock_.advance(Millis(2'000));
  registry_.evaluate(registry_.auto_monitor("run-1"));
  EXPECT_EQ(released_, std::vector<std::string>{"run-1"});
  EXPECT_TRUE(registry_.names().empty());
  EXPECT_EQ(registry_.expired(), 1u);
  EXPECT_EQ(registry_.ingest("run-1", node_report("node-0", 0, 2)).outcome, IngestOutcome::kCreated)
      << "a later report creates it anew";
}

TEST_F(Registry, TheCapOnAutoCreatedJobsFreesAsJobsExpire) {
  config_.jobs.expire_after = Millis(60'000);
  configure();
  for (size_t i = 0; i < kMaxAutoJobs; ++i) {
    ASSERT_EQ(registry_.ingest("run-" + std::to_string(i), node_report("node-0", 0, 1)).outcome,
              IngestOutcome::kCreated);
  }
  EXPECT_EQ(registry_.ingest("one-more", node_report("node-0", 0, 1)).outcome, IngestOutcome::kTooManyJobs);
  clock_.advance(Millis(61'000));
  EXPECT_EQ(registry_.ingest("one-more", node_report("node-0", 0, 1)).outcome, IngestOutcome::kCreated);
  EXPECT_EQ(released_.size(), kMaxAutoJobs);
  EXPECT_EQ(registry_.names(), std::vector<std::string>{"one-more"});
}

TEST_F(Registry, ADeclaredJobNeverExpires) {
  MonitorConfig m;
  m.name = "llama";
  m.type = MonitorType::kJob;
  m.spec = JobCheckSpec{};
  config_.monitors.push_back(m);
  config_.jobs.expire_after = Millis(1'000);
  configure();
  registry_.ingest("llama", node_report("node-0", 0, 1));
  clock_.advance(Millis(10'000));
  registry_.evaluate(m);
  EXPECT_TRUE(released_.empty());
  EXPECT_EQ(registry_.names(), std::vector<std::string>{"llama"});
}

// 16,384 ranks that all stopped stepping: one finding names them all. The verdict, the
// grid's summary and the alert text come out complete and bounded.
TEST_F(Registry, AStalled16384RankJobIsAnalysedAndSummarised) {
  config_.jobs.thresholds.step_timeout = Millis(5'000);
  configure();
  for (int node = 0; node < 16; ++node) {
    ASSERT_EQ(
        registry_.ingest("huge", node_report("node-" + std::to_string(node), node * 1'024, 1'024)).outcome,
        node == 0 ? IngestOutcome::kCreated : IngestOutcome::kAccepted);
  }
  clock_.advance(Millis(8'000));
  for (int node = 0; node < 16; ++node) {
    registry_.ingest("huge", node_report("node-" + std::to_string(node), node * 1'024, 1'024, 10, 8'000));
  }
  const CheckResult result = registry_.evaluate(registry_.auto_monitor("huge"));
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.cause.find("all running ranks (0-16383) stuck at step 10"), std::string::npos)
      << result.cause;

  auto s = registry_.snapshot("huge");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->rank_count, 16'384u);
  EXPECT_TRUE(s->ranks_omitted);
  EXPECT_EQ(s->named_nodes, std::vector<std::string>{"node-0"})
      << "a finding naming every rank names the nodes of its first ranks, within kMaxDetailedRanks ranks";
  EXPECT_EQ(s->state->ranks().size(), 1'024u) << "only the named node's ranks are copied";
  EXPECT_EQ(s->state->nodes().size(), 1u);
  EXPECT_EQ(s->node_count, 16u);
  ASSERT_EQ(s->rank_summary.ranges.size(), 1u);
  EXPECT_EQ(s->rank_summary.ranges[0].first, 0);
  EXPECT_EQ(s->rank_summary.ranges[0].last, 16'383);
  EXPECT_EQ(s->rank_summary.ranges[0].health, RankHealth::kDown);
  EXPECT_EQ(s->verdict->cause, result.cause) << "readers see the verdict the engine applied";
}

// 131,072 ranks on 16,384 nodes, one rank killed: a reader's detailed copy holds the
// killed rank's node and its ranks, culprit first, and a list's copy holds no node at all;
// both count every node and rank.
TEST_F(Registry, AReadersCopyOfA131072RankJobHoldsTheCulpritsNodeOnly) {
  constexpr int kNodes = 16'384, kPerNode = 8, kVictim = 1234 * kPerNode + 5;
  config_.jobs.max_ranks = kNodes * kPerNode;
  configure();
  auto report = [&](int node, bool killed) {
    std::vector<RankReport> ranks;
    for (int i = 0; i < kPerNode; ++i) {
      const int rank = node * kPerNode + i;
      RankReport r = testing::training(rank, 100);
      ranks.push_back(killed && rank == kVictim ? testing::exited(r, 0, 9) : r);
    }
    return testing::node_report("node-" + std::to_string(node), std::move(ranks), Millis(5'000));
  };
  for (int node = 0; node < kNodes; ++node)
    ASSERT_NE(registry_.ingest("big", report(node, false)).outcome, IngestOutcome::kTooManyNodes);
  clock_.advance(Millis(1'000));
  registry_.ingest("big", report(1234, true));
  const CheckResult result = registry_.evaluate(registry_.auto_monitor("big"));
  ASSERT_FALSE(result.ok);
  EXPECT_NE(result.cause.find("rank 9877 "), std::string::npos) << result.cause;

  auto detail = registry_.snapshot("big");
  ASSERT_TRUE(detail);
  EXPECT_EQ(detail->rank_count, 131'072u);
  EXPECT_EQ(detail->node_count, 16'384u);
  EXPECT_TRUE(detail->ranks_omitted && detail->nodes_omitted);
  ASSERT_FALSE(detail->named_nodes.empty());
  EXPECT_EQ(detail->named_nodes.front(), "node-1234");
  EXPECT_EQ(detail->state->nodes().count("node-1234"), 1u);
  EXPECT_EQ(detail->state->ranks().count(kVictim), 1u);
  EXPECT_LE(detail->state->ranks().size(), kMaxDetailedRanks);
  EXPECT_EQ(detail->front.max_step, 100);

  auto listed = registry_.snapshot("big", SnapshotDetail::kSummary);
  ASSERT_TRUE(listed);
  EXPECT_TRUE(listed->state->nodes().empty() && listed->state->ranks().empty());
  EXPECT_EQ(listed->node_count, 16'384u);
  EXPECT_EQ(listed->rank_summary.counts.at(RankHealth::kDown), 1u);
}

// Analysis runs once per tick, in evaluate(); a reader shows that tick's verdict, so the
// API never names a finding the engine has not applied, even after newer reports.
TEST_F(Registry, AReaderSeesExactlyTheVerdictTheLastTickProduced) {
  ASSERT_EQ(registry_.ingest("run", node_report("node-a", 0, 2)).outcome, IngestOutcome::kCreated);
  EXPECT_EQ(registry_.snapshot("run")->verdict->phase, JobPhase::kWaiting) << "before the first tick";
  EXPECT_TRUE(registry_.snapshot("run")->verdict->findings.empty());

  const CheckResult up = registry_.evaluate(registry_.auto_monitor("run"));
  ASSERT_TRUE(up.ok) << up.cause;
  NodeReport vanished = node_report("node-a", 0, 2);
  vanished.ranks[1].alive = false;
  clock_.advance(Millis(1'000));
  ASSERT_EQ(registry_.ingest("run", vanished).outcome, IngestOutcome::kAccepted);
  auto before_tick = registry_.snapshot("run");
  EXPECT_FALSE(before_tick->verdict->down) << "the engine has not seen the vanished rank yet";
  EXPECT_TRUE(before_tick->verdict->findings.empty());
  EXPECT_EQ(before_tick->verdict, registry_.snapshot("run")->verdict) << "readers share the tick's verdict";

  const CheckResult down = registry_.evaluate(registry_.auto_monitor("run"));
  ASSERT_FALSE(down.ok);
  auto after_tick = registry_.snapshot("run");
  EXPECT_TRUE(after_tick->verdict->down);
  EXPECT_EQ(after_tick->verdict->cause, down.cause);
  ASSERT_EQ(after_tick->verdict->findings.size(), 1u);
  EXPECT_EQ(after_tick->verdict->findings[0].code, FindingCode::kRankGone);
}

TEST_F(Registry, AStoredReportOlderThanTheNodesNewestChangesNothing) {
  ASSERT_EQ(registry_.ingest("run", node_report("node-a", 0, 2, 10)).outcome, IngestOutcome::kCreated);
  clock_.advance(Millis(1'000));
  EXPECT_EQ(registry_.ingest("run", node_report("node-a", 0, 2, 9), Millis(1'500)).outcome,
            IngestOutcome::kOutdated)
      << "taken by another replica before this one took its newer report";
  EXPECT_EQ(registry_.snapshot("run")->max_step, 10);
  EXPECT_EQ(registry_.ingest("run", node_report("node-a", 0, 2, 11), Millis(300)).outcome,
            IngestOutcome::kAccepted);
  auto s = registry_.snapshot("run");
  EXPECT_EQ(s->max_step, 11);
  EXPECT_EQ(clock_.monotonic_time() - s->state->nodes().at("node-a").last_seen, Millis(300))
      << "dated when it was taken";
}

TEST_F(Registry, AJobThisReplicaIsTheStandbyOfIsAnalysedForItsReaders) {
  ASSERT_EQ(registry_.ingest("standby", node_report("node-a", 0, 2)).outcome, IngestOutcome::kCreated);
  ASSERT_EQ(registry_.ingest("mine", node_report("node-b", 0, 2)).outcome, IngestOutcome::kCreated);
  ASSERT_EQ(registry_.ingest("elsewhere", node_report("node-c", 0, 2)).outcome, IngestOutcome::kCreated);
  registry_.analyse_others([](const std::string& job) { return job == "standby"; });
  EXPECT_EQ(registry_.snapshot("standby")->verdict->phase, JobPhase::kTraining);
  EXPECT_EQ(registry_.snapshot("mine")->verdict->phase, JobPhase::kWaiting)
      << "the engine's tick analyses it";
  EXPECT_EQ(registry_.snapshot("elsewhere")->verdict->phase, JobPhase::kWaiting)
      << "its holders answer its reads";
}

TEST_F(Registry, TheCheckerHandsOutAMemoWhenTheJobsAttemptsOrLedgerChangeAndAStartResumesIt) {
  std::vector<std::pair<std::string, std::string>> memos;
  registry_.set_on_memo([&](const std::string& job, std::string memo) { memos.emplace_back(job, memo); });
  ASSERT_EQ(registry_.ingest("run", node_report("node-a", 0, 2)).outcome, IngestOutcome::kCreated);
  registry_.evaluate(registry_.auto_monitor("run"));
  ASSERT_EQ(memos.size(), 1u) << "the first attempt began";
  clock_.advance(Millis(1'000));
  registry_.ingest("run", node_report("node-a", 0, 2, 11));
  registry_.evaluate(registry_.auto_monitor("run"));
  EXPECT_EQ(memos.size(), 1u) << "steps alone change no memo";
  NodeReport vanished = node_report("node-a", 0, 2, 12);
  vanished.ranks[1].alive = false;
  clock_.advance(Millis(1'000));
  registry_.ingest("run", vanished);
  registry_.evaluate(registry_.auto_monitor("run"));
  ASSERT_EQ(memos.size(), 2u) << "an interruption opened";

  JobRegistry restarted(clock_);
  restarted.configure(config_);
  auto resumed = restarted.resume("run", memos.back().second);
  ASSERT_TRUE(resumed.ok()) << resumed.error().message;
  EXPECT_EQ(*resumed, IngestOutcome::kCreated);
  auto s = restarted.snapshot("run");
  EXPECT_EQ(s->ledger->count(), 1u);
  EXPECT_TRUE(s->ledger->open());
  EXPECT_EQ(*restarted.resume("run", memos.back().second), IngestOutcome::kAccepted);
  restarted.ingest("run", node_report("node-a", 0, 2, 12));
  EXPECT_EQ(*restarted.resume("run", memos.back().second), IngestOutcome::kOutdated)
      << "a report came first: what it says is newer";
  EXPECT_FALSE(restarted.resume("other", "{}").ok());
  EXPECT_FALSE(restarted.snapshot("other")) << "a job an unreadable memo would have created is not kept";
}

TEST_F(Registry, ASummaryListsAtMostKMaxRankRangesAndCountsTheRest) {
  for (int node = 0; node < 2; ++node) {
    NodeReport r = node_report("node-" + std::to_string(node), node * 1'000, 1'000);
    for (auto& rank : r.ranks) {
      if (rank.rank % 2) rank.status = RankStatus::kFinished;  // alternate: one range a rank
    }
    registry_.ingest("stripes", r);
  }
  auto s = registry_.snapshot("stripes");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->rank_summary.ranges.size(), kMaxRankRanges);
  EXPECT_EQ(s->rank_summary.ranges_left_out, 2'000 - kMaxRankRanges);
  EXPECT_EQ(s->rank_summary.counts.at(RankHealth::kFinished), 1'000u);
}

// Ages come from agents: INT64_MAX must read as "very long ago", not overflow the server's
// time arithmetic into a step in the future (which hid this stall before ages were clamped).
TEST_F(Registry, AgesUpToInt64MaxAreClampedAndStillMeanLongAgo) {
  config_.jobs.thresholds.step_timeout = Millis(5'000);
  configure();
  auto report = parse_node_report(R"({"schema":1,"node":"node-a","report_every_ms":1000,
    "ranks":[{"rank":0,"pid":7,"status":"training","step":9223372036854775807,"step_reports":50,
              "last_step_age_ms":9223372036854775807,"max_step_gap_ms":9223372036854775807,
              "checkpoint":{"state":"ok","step":9223372036854775807,"duration_ms":9223372036854775807,
                            "last_ok_step":1,"last_ok_age_ms":18446744073709551615},
              "error":{"message":"late","age_ms":1e300}},
             {"rank":1,"pid":8,"status":"training","step":3,"step_reports":50,"last_step_age_ms":9223372036854775807}]})");
  ASSERT_TRUE(report) << report.error().message;
  const RankReport& r = report->ranks[0];
  EXPECT_EQ(r.last_step_age_ms, kMaxAgeMs);
  EXPECT_EQ(r.max_step_gap_ms, kMaxAgeMs);
  EXPECT_EQ(r.step, kMaxStep);
  EXPECT_EQ(r.checkpoint.duration_ms, kMaxAgeMs);
  EXPECT_EQ(r.checkpoint.last_ok_age_ms, kMaxAgeMs);
  EXPECT_EQ(r.error_age_ms, kMaxAgeMs);
  clock_.advance(Millis(1'000));
  ASSERT_EQ(registry_.ingest("old", *report).outcome, IngestOutcome::kCreated);
  const CheckResult result = registry_.evaluate(registry_.auto_monitor("old"));
  EXPECT_FALSE(result.ok) << "no step for a year is a stall";
  EXPECT_NE(result.cause.find("furthest behind at step 3"), std::string::npos) << result.cause;
  auto s = registry_.snapshot("old");
  ASSERT_TRUE(s);
  EXPECT_EQ(step_lag(s->state->ranks().at(1), front_of(s->state->ranks())), kMaxStep - 3);
}

TEST(RankSet, AHugeScatteredSetIsCutAndCounted) {
  std::vector<int> ranks;
  for (int i = 0; i < 20'000; i += 2) ranks.push_back(i);
  const std::string text = format_rank_set(ranks);
  EXPECT_LT(text.size(), kMaxRankSetChars + 40);
  EXPECT_NE(text.find("more ranks"), std::string::npos) << text;
}

}  // namespace
}  // namespace trainwatch::jobs
