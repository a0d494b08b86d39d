// The rank grid's one word per rank, from a verdict and the rank's last report.
#include <gtest/gtest.h>

#include "jobs/rank_health.h"

namespace trainwatch::jobs {
namespace {

RankRecord training_rank(int64_t step = 100) {
  RankRecord r;
  r.last.status = RankStatus::kTraining;
  r.last.alive = true;
  r.last.step = step;
  return r;
}

// The most advanced rank at `max_step`, every report seen at once.
JobFront front_at(int64_t max_step) { return JobFront{max_step, MonoTime{}}; }

Finding finding(Severity severity, std::vector<int> ranks) {
  Finding f;
  f.severity = severity;
  f.ranks = std::move(ranks);
  return f;
}

TEST(RankHealth, InStepWithTheOthersIsOk) {
  JobVerdict v;
  EXPECT_EQ(rank_health(v, 0, training_rank(100), front_at(100)), RankHealth::kOk);
  EXPECT_EQ(rank_health(v, 1, training_rank(99), front_at(100)), RankHealth::kOk)
      << "one step of lag is normal in sync training";
}

TEST(RankHealth, TwoStepsBehindIsBehind) {
  JobVerdict v;
  EXPECT_EQ(rank_health(v, 3, training_rank(100 - kBehindSteps), front_at(100)), RankHealth::kBehind);
  EXPECT_EQ(step_lag(training_rank(100 - kBehindSteps), front_at(100)), kBehindSteps);
}

// The lag is read from the same ranks as the step: the most advanced rank is never behind,
// whatever an older verdict said (it was computed before this rank's newest report).
TEST(RankHealth, TheMostAdvancedRankIsNeverBehind) {
  JobVerdict v;
  std::map<int, RankRecord> ranks = {{0, training_rank(8)}, {1, training_rank(15)}};
  const JobFront front = front_of(ranks);
  EXPECT_EQ(front.max_step, 15);
  EXPECT_EQ(rank_health(v, 1, ranks.at(1), front), RankHealth::kOk);
  EXPECT_EQ(rank_health(v, 0, ranks.at(0), front), RankHealth::kBehind);
  const RankSummary summary = summarise_ranks(v, ranks);
  ASSERT_EQ(summary.ranges.size(), 2u);
  EXPECT_EQ(summary.ranges[0].health, RankHealth::kBehind);
  EXPECT_EQ(summary.ranges[1].health, RankHealth::kOk);
}

TEST(RankHealth, LagExplainedByAnOlderReportIsForgiven) {
  JobVerdict v;
  v.timeouts.smoothed_step_gap = Millis(500);
  RankRecord r = training_rank(96);
  r.seen = MonoTime{} + Millis(10'000);
  const JobFront front{100, r.seen + Millis(2'000)};  // another node reported 2 s later: 4 steps
  EXPECT_EQ(rank_health(v, 4, r, front), RankHealth::kOk);
  r.last.step = 96 - kBehindSteps;
  EXPECT_EQ(rank_health(v, 4, r, front), RankHealth::kBehind) << "lag beyond the skew still shows";
}

TEST(RankHealth, NamedByADownFindingIsDownEvenWhenInStep) {
  JobVerdict v;
  v.findings = {finding(Severity::kWarning, {2}), finding(Severity::kDown, {1, 2})};
  EXPECT_EQ(rank_health(v, 2, training_rank(), front_at(100)), RankHealth::kDown);
  EXPECT_EQ(rank_health(v, 0, training_rank(), front_at(100)), RankHealth::kOk)
      << "a finding about others leaves this rank alone";
}

TEST(RankHealth, AStragglerWarningOutranksLag) {
  JobVerdict v;
  v.findings = {finding(Severity::kWarning, {3})};
  EXPECT_EQ(rank_health(v, 3, training_rank(95), front_at(100)), RankHealth::kWarning);
}

TEST(RankHealth, AFailedOrVanishedProcessIsDownWithoutAFinding) {
  JobVerdict v;
  RankRecord failed = training_rank();
  failed.last.status = RankStatus::kFailed;
  EXPECT_EQ(rank_health(v, 0, failed, front_at(100)), RankHealth::kDown);
  RankRecord gone = training_rank();
  gone.last.alive = false;
  EXPECT_EQ(rank_health(v, 0, gone, front_at(100)), RankHealth::kDown);
}

TEST(RankHealth, AFinishedRankThatExitedIsFinished) {
  JobVerdict v;
  RankRecord done = training_rank(50);
  done.last.status = RankStatus::kFinished;
  done.last.alive = false;
  EXPECT_EQ(rank_health(v, 0, done, front_at(100)), RankHealth::kFinished);
}

}  // namespace
}  // namespace trainwatch::jobs
