// Ranks that ended, as the job analysis and the rank grid read them: an exit with code 0 is
// finished whatever the rank last said, a rank its node's final report left alive is never
// timed out, and a node whose ranks all ended is finished, not lost. Manual clock.
#include <algorithm>

#include <gtest/gtest.h>

#include "fakes/manual_clock.h"
#include "jobs/analysis.h"
#include "jobs/job_state.h"
#include "jobs/rank_health.h"
#include "jobs/rank_reports.h"

namespace trainwatch::jobs {
namespace {

using testing::exited;
using testing::ManualClock;
using testing::node_report;
using testing::training;

RankReport finished(int rank, int64_t step) {
  RankReport r = training(rank, step);
  r.status = RankStatus::kFinished;
  return r;
}

class RankExits : public ::testing::Test {
 protected:
  RankExits() : job_("llama") {
    spec_.world_size = 2;
    spec_.thresholds.step_timeout_min = Millis(2'000);
    spec_.thresholds.node_silent_after = Millis(3'000);
  }

  void report(std::vector<RankReport> ranks, bool final = false) {
    ASSERT_TRUE(job_.ingest(node_report("node-a", std::move(ranks), Millis(1'000), final),
                            clock_.monotonic_time(), clock_.system_time()));
  }

  // Two ranks on one node stepping 10 a second for 10 s; returns the last step.
  int64_t train() {
    int64_t step = 0;
    for (int i = 0; i < 10; ++i, step += 10) {
      report({training(0, step), training(1, step)});
      clock_.advance(Millis(1'000));
    }
    report({training(0, step), training(1, step)});
    return step;
  }

  JobVerdict verdict() { return analyse(job_, spec_, clock_.monotonic_time(), clock_.system_time()); }

  ManualClock clock_;
  JobState job_;
  JobCheckSpec spec_;
};

// The agent's host (local rank 0) finishes first; its last report leaves rank 1 running,
// unwatched until another rank's agent reports. That rank is not timed out: today's
// "all running ranks (1) stuck at step 14" a minute later was a stale report read as a hang.
TEST_F(RankExits, ARankTheFinalReportLeftRunningIsNeverTimedOut) {
  int64_t step = train();
  report({finished(0, step), training(1, step)}, /*final=*/true);
  clock_.advance(Millis(2'500));  // within the silence limit: nothing to say yet
  JobVerdict v = verdict();
  EXPECT_FALSE(v.down) << v.cause;
  EXPECT_TRUE(v.findings.empty()) << v.cause;
  clock_.advance(Millis(60'000));  // no agent took over: a warning, never a page
  v = verdict();
  EXPECT_FALSE(v.down) << v.cause;
  auto lost = std::find_if(v.findings.begin(), v.findings.end(),
                           [](const Finding& f) { return f.code == FindingCode::kMonitoringLost; });
  ASSERT_NE(lost, v.findings.end()) << v.cause;
  EXPECT_EQ(lost->severity, Severity::kWarning);
  EXPECT_EQ(lost->ranks, std::vector<int>{1});
  EXPECT_NE(lost->message.find("its agent stopped with its host process"), std::string::npos)
      << lost->message;
  for (const auto& f : v.findings) EXPECT_EQ(f.severity, Severity::kWarning) << f.message;
}

// The role passed: rank 1's own agent reports (final false), then its last report as it ends.
TEST_F(RankExits, TheSuccessorsReportsWatchTheRankAndItsFinalOneFinishesTheJob) {
  int64_t step = train();
  report({finished(0, step), training(1, step)}, /*final=*/true);
  clock_.advance(Millis(500));
  report({exited(finished(0, step), 0), training(1, step)});
  clock_.advance(Millis(1'000));
  report({exited(finished(0, step), 0), training(1, step)});
  EXPECT_FALSE(verdict().down);
  clock_.advance(Millis(1'000));
  report({exited(finished(0, step), 0), finished(1, step)}, /*final=*/true);
  clock_.advance(Millis(90'000));
  JobVerdict v = verdict();
  EXPECT_EQ(v.phase, JobPhase::kFinished);
  EXPECT_FALSE(v.down) << v.cause;
  EXPECT_TRUE(v.findings.empty()) << v.cause;
}

// A rank that never said "finished" (os._exit(0), a C program, a wrapper) but exited 0.
TEST_F(RankExits, AnExitWithCodeZeroIsFinishedWhateverTheRankLastSaid) {
  int64_t step = train();
  report({exited(training(0, step), 0), exited(training(1, step), 0)}, /*final=*/true);
  JobVerdict v = verdict();
  EXPECT_EQ(v.phase, JobPhase::kFinished);
  EXPECT_FALSE(v.down) << v.cause;
  const RankHealthIndex index(v);
  EXPECT_EQ(index.health(0, job_.ranks().at(0), front_of(job_.ranks())), RankHealth::kFinished);
  clock_.advance(Millis(90'000));
  EXPECT_FALSE(verdict().down) << verdict().cause;
}

// Any other exit of a rank still training is the failure it always was.
TEST_F(RankExits, AnExitWithAnotherCodeIsStillARankGone) {
  int64_t step = train();
  report({exited(training(0, step), 1), training(1, step)});
  JobVerdict v = verdict();
  ASSERT_TRUE(v.down);
  EXPECT_EQ(v.findings.front().code, FindingCode::kRankGone);
  EXPECT_NE(v.cause.find("exited with code 1"), std::string::npos) << v.cause;
}

}  // namespace
}  // namespace trainwatch::jobs
