// The rank grid's one word per rank, from a verdict and the rank's last report.
#include <gtest/gtest.h>

#include "jobs/rank_health.h"

namespace trainwatch::jobs {
namespace {

RankRecord training_rank() {
  RankRecord r;
  r.last.status = RankStatus::kTraining;
  r.last.alive = true;
  r.last.step = 100;
  return r;
}

Finding finding(Severity severity, std::vector<int> ranks) {
  Finding f;
  f.severity = severity;
  f.ranks = std::move(ranks);
  return f;
}

TEST(RankHealth, InStepWithTheOthersIsOk) {
  JobVerdict v;
  v.lag = {{0, 0}, {1, 1}};
  EXPECT_EQ(rank_health(v, 0, training_rank(), {}), RankHealth::kOk);
  EXPECT_EQ(rank_health(v, 1, training_rank(), {}), RankHealth::kOk)
      << "one step of lag is normal in sync training";
}

TEST(RankHealth, TwoStepsBehindIsBehind) {
  JobVerdict v;
  v.lag = {{3, kBehindSteps}};
  EXPECT_EQ(rank_health(v, 3, training_rank(), {}), RankHealth::kBehind);
}

TEST(RankHealth, LagExplainedByAnOlderReportIsForgiven) {
  JobVerdict v;
  v.timeouts.smoothed_step_gap = Millis(500);
  v.lag = {{4, 4}};
  RankRecord r = training_rank();
  r.seen = MonoTime{} + Millis(10'000);
  const MonoTime newest = r.seen + Millis(2'000);  // another node reported 2 s later: 4 steps
  EXPECT_EQ(rank_health(v, 4, r, newest), RankHealth::kOk);
  v.lag = {{4, 4 + kBehindSteps}};
  EXPECT_EQ(rank_health(v, 4, r, newest), RankHealth::kBehind) << "lag beyond the skew still shows";
}

TEST(RankHealth, NamedByADownFindingIsDownEvenWhenInStep) {
  JobVerdict v;
  v.findings = {finding(Severity::kWarning, {2}), finding(Severity::kDown, {1, 2})};
  EXPECT_EQ(rank_health(v, 2, training_rank(), {}), RankHealth::kDown);
  EXPECT_EQ(rank_health(v, 0, training_rank(), {}), RankHealth::kOk)
      << "a finding about others leaves this rank alone";
}

TEST(RankHealth, AStragglerWarningOutranksLag) {
  JobVerdict v;
  v.findings = {finding(Severity::kWarning, {3})};
  v.lag = {{3, 5}};
  EXPECT_EQ(rank_health(v, 3, training_rank(), {}), RankHealth::kWarning);
}

TEST(RankHealth, AFailedOrVanishedProcessIsDownWithoutAFinding) {
  JobVerdict v;
  RankRecord failed = training_rank();
  failed.last.status = RankStatus::kFailed;
  EXPECT_EQ(rank_health(v, 0, failed, {}), RankHealth::kDown);
  RankRecord gone = training_rank();
  gone.last.alive = false;
  EXPECT_EQ(rank_health(v, 0, gone, {}), RankHealth::kDown);
}

TEST(RankHealth, AFinishedRankThatExitedIsFinished) {
  JobVerdict v;
  RankRecord done = training_rank();
  done.last.status = RankStatus::kFinished;
  done.last.alive = false;
  v.lag = {{0, 50}};
  EXPECT_EQ(rank_health(v, 0, done, {}), RankHealth::kFinished);
}

}  // namespace
}  // namespace trainwatch::jobs
