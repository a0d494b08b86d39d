// Runs and attempts on a manual clock: which launch each report opens, how the one it
// replaces ended, what the interruption ledger makes of it, and what a memo keeps.
#include <csignal>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fakes/manual_clock.h"
#include "jobs/analysis.h"
#include "jobs/interruption.h"
#include "jobs/job_memo.h"
#include "jobs/job_state.h"
#include "jobs/launch_record.h"
#include "jobs/rank_reports.h"

namespace trainwatch::jobs {
namespace {

using testing::exited;
using testing::ManualClock;
using testing::node_report;
using testing::training;

// A rank of run `run_id` at the launcher's restart count `attempt`; pids differ per
// run, attempt and rank, as a relaunch's do.
RankReport rank_of(const std::string& run_id, int attempt, int rank, int64_t step, int pid_base) {
  RankReport r = training(rank, step);
  r.world_size = 2;
  r.pid = pid_base + 10 * attempt + rank;
  r.attempt = attempt;
  r.run_id = run_id;
  return r;
}

RankReport finished(RankReport r) {
  r = exited(std::move(r), 0);
  r.status = RankStatus::kFinished;
  return r;
}

RankReport killed(RankReport r, int signal) { return exited(std::move(r), -1, signal); }

class JobRuns : public ::testing::Test {
 protected:
  JobRuns() : job_("llama") {
    spec_.world_size = 2;
    spec_.thresholds.step_timeout_min = Millis(2'000);
  }

  // One report from node-a carrying `ranks`, received now.
  void report(std::vector<RankReport> ranks) {
    ASSERT_TRUE(job_.ingest(node_report("node-a", std::move(ranks), Millis(1'000)), clock_.monotonic_time(),
                            clock_.system_time()));
  }

  // Ranks 0 and 1 of (run_id, attempt) train from `from` for `seconds`, a report a second.
  int64_t train(const std::string& run_id, int attempt, int pid_base, int64_t from, int seconds) {
    int64_t step = from;
    for (int i = 0; i < seconds; ++i) {
      report({rank_of(run_id, attempt, 0, step, pid_base), rank_of(run_id, attempt, 1, step, pid_base)});
      clock_.advance(Millis(1'000));
      step += 10;
    }
    return step;
  }

  JobVerdict verdict() { return analyse(job_, spec_, clock_.monotonic_time(), clock_.system_time()); }
  void tick() { ledger_.observe(job_, verdict(), clock_.monotonic_time(), clock_.system_time()); }

  ManualClock clock_;
  JobState job_;
  JobCheckSpec spec_;
  InterruptionLedger ledger_;
};

// The job torchrun restarted once (attempt 1) finished; the same job submitted again (srun:
// a new run id, the count from 0) is a new run, watched: a rank SIGKILLed in it is named.
TEST_F(JobRuns, ARunAgainAfterOneThatFinishedAtAttemptOneIsANewRunWhoseKilledRankIsNamed) {
  int64_t step = train("rdzv-1", 0, 1000, 0, 5);
  report({killed(rank_of("rdzv-1", 0, 0, step, 1000), SIGKILL), rank_of("rdzv-1", 0, 1, step, 1000)});
  clock_.advance(Millis(1'000));
  step = train("rdzv-1", 1, 1000, 20, 5);
  report({finished(rank_of("rdzv-1", 1, 0, step, 1000)), finished(rank_of("rdzv-1", 1, 1, step, 1000))});
  ASSERT_EQ(verdict().phase, JobPhase::kFinished);
  clock_.advance(Millis(60'000));

  train("8812345", 0, 5000, 0, 5);
  const JobVerdict trains = verdict();
  EXPECT_FALSE(trains.down) << trains.cause;
  EXPECT_EQ(trains.phase, JobPhase::kTraining);
  report({rank_of("8812345", 0, 0, 50, 5000), killed(rank_of("8812345", 0, 1, 50, 5000), SIGKILL)});
  const JobVerdict v = verdict();
  ASSERT_TRUE(v.down) << "the new run is watched";
  EXPECT_EQ(v.findings.front().code, FindingCode::kRankGone);
  EXPECT_EQ(v.findings.front().ranks, std::vector<int>{1});

  ASSERT_EQ(job_.runs().size(), 2u);
  EXPECT_EQ(job_.runs()[0].run_id, "rdzv-1");
  EXPECT_EQ(job_.runs()[0].outcome, LaunchOutcome::kFinished);
  EXPECT_TRUE(job_.runs()[0].ended_wall);
  EXPECT_EQ(job_.runs()[1].run_id, "8812345");
  EXPECT_EQ(job_.runs()[1].outcome, LaunchOutcome::kOpen);
  ASSERT_EQ(job_.attempts().size(), 3u);
  EXPECT_EQ(job_.attempts()[0].outcome, LaunchOutcome::kFailed) << "rank 0 was SIGKILLed";
  EXPECT_EQ(job_.attempts()[1].outcome, LaunchOutcome::kFinished);
  EXPECT_EQ(job_.attempts()[1].run, 1);
  EXPECT_EQ(job_.attempts()[2].run, 2);
  EXPECT_EQ(job_.attempts()[2].launcher_attempt, 0);
  EXPECT_EQ(job_.ranks().at(0).last.run_id, "8812345");
}

TEST_F(JobRuns, TwoRunIdsAtTheSameAttemptAreTwoRunsAndTheEarlierOnesLateReportIsHistory) {
  const int64_t step = train("runA", 0, 1000, 0, 3);
  train("runB", 0, 2000, 0, 3);
  ASSERT_EQ(job_.runs().size(), 2u);
  EXPECT_EQ(job_.runs()[0].run_id, "runA");
  EXPECT_EQ(job_.runs()[0].outcome, LaunchOutcome::kSuperseded) << "runA's ranks still ran";
  EXPECT_EQ(job_.runs()[1].run_id, "runB");
  ASSERT_EQ(job_.attempts().size(), 2u);
  EXPECT_EQ(job_.attempts()[1].run_id, "runB");

  // runA's agent, late, still shows its ranks: neither a new run nor a rank of runB.
  report({rank_of("runA", 0, 0, step, 1000), killed(rank_of("runA", 0, 1, step, 1000), SIGKILL)});
  EXPECT_EQ(job_.runs().size(), 2u);
  EXPECT_EQ(job_.ranks().at(1).last.run_id, "runB");
  EXPECT_FALSE(verdict().down) << verdict().cause;
}

// No launcher names the run: a script run again after every rank ended is a new run, and
// the old ranks its agent still shows dead are history, not ranks gone.
TEST_F(JobRuns, WithoutRunIdsANewProcessAfterEveryRankEndedIsANewRun) {
  const int64_t step = train("", 0, 1000, 0, 3);
  report({finished(rank_of("", 0, 0, step, 1000)), finished(rank_of("", 0, 1, step, 1000))});
  clock_.advance(Millis(10'000));
  RankReport old_dead = killed(rank_of("", 0, 1, step, 1000), SIGKILL);
  report({rank_of("", 0, 0, 0, 3000), old_dead});
  ASSERT_EQ(job_.runs().size(), 2u);
  EXPECT_EQ(job_.runs()[0].outcome, LaunchOutcome::kFinished);
  EXPECT_EQ(job_.ranks().count(1), 0u) << "the first run's rank 1 is history";
  report({rank_of("", 0, 0, 10, 3000), rank_of("", 0, 1, 10, 3000)});
  EXPECT_FALSE(verdict().down) << verdict().cause;
  EXPECT_EQ(job_.runs().size(), 2u);
}

// A rank that restarts in place while its peers train is the same attempt: only every
// rank's end, or the launcher, begins something new.
TEST_F(JobRuns, ARankReplacedWhileItsPeersTrainIsTheSameAttempt) {
  const int64_t step = train("", 0, 1000, 0, 3);
  report({rank_of("", 0, 0, step, 1000), rank_of("", 0, 1, step, 4000)});
  EXPECT_EQ(job_.runs().size(), 1u);
  EXPECT_EQ(job_.attempts().size(), 1u);
}

// A rank first heard of joins the current attempt, even when every rank seen so far has
// ended: another node's first report, or the rest of the report that carried them.
TEST_F(JobRuns, ARankFirstHeardOfAfterTheOthersEndedJoinsTheAttempt) {
  RankReport failed = rank_of("", 0, 0, 5, 1000);
  failed.status = RankStatus::kFailed;
  failed.error = "ValueError: bad batch";
  report({failed, rank_of("", 0, 1, 5, 1000)});
  EXPECT_EQ(job_.runs().size(), 1u);
  EXPECT_EQ(job_.ranks().size(), 2u);
}

// Two nodes under torchrun: node-a restarts first (attempt 1); node-b's next report still
// shows its attempt-0 ranks alive. They are the replaced attempt's, not a new run.
TEST_F(JobRuns, ALowerCountFromAReplacedProcessIsHistoryNotANewRun) {
  train("", 0, 1000, 0, 3);
  train("", 1, 1000, 20, 2);
  ASSERT_EQ(job_.attempts().size(), 2u);
  report({rank_of("", 0, 0, 30, 1000)});  // attempt 0's rank 0, pid 1000, late
  EXPECT_EQ(job_.runs().size(), 1u);
  EXPECT_EQ(job_.attempts().size(), 2u);
  EXPECT_EQ(job_.ranks().at(0).last.attempt, 1);

  report({rank_of("", 0, 0, 0, 7000)});  // a new process counting from 0: a new run
  EXPECT_EQ(job_.runs().size(), 2u);
  EXPECT_EQ(job_.attempts().back().launcher_attempt, 0);
}

// A new run is a submission judged as a first launch, whatever count it starts at: not a
// restart that keeps the job down until it steps.
TEST_F(JobRuns, ANewRunAtAHigherCountIsNotARestart) {
  const int64_t step = train("runA", 0, 1000, 0, 3);
  report({finished(rank_of("runA", 0, 0, step, 1000)), finished(rank_of("runA", 0, 1, step, 1000))});
  clock_.advance(Millis(5'000));
  RankReport starting = rank_of("runB", 1, 0, -1, 2000);
  starting.status = RankStatus::kInitializing;
  starting.step_reports = 0;
  report({starting});
  ASSERT_EQ(job_.runs().size(), 2u);
  const JobVerdict v = verdict();
  EXPECT_FALSE(v.down) << v.cause;
  EXPECT_EQ(v.phase, JobPhase::kStarting);
}

// A Slurm requeue: the scheduler takes the node, agent and ranks alike (the node goes
// silent), then starts the job again under the same job id with SLURM_RESTART_COUNT=1.
TEST_F(JobRuns, ASlurmRequeueIsClassedRequeuedNotNodeLost) {
  int64_t step = train("8812345", 0, 1000, 0, 5);
  tick();
  clock_.advance(Millis(6'000));  // silent past 3 report intervals
  tick();
  ASSERT_TRUE(ledger_.open());
  EXPECT_EQ(ledger_.entries().back().cause.kind, InterruptionKind::kNodeLost);

  clock_.advance(Millis(20'000));
  step = train("8812345", 1, 3000, 30, 1);
  tick();
  EXPECT_EQ(job_.runs().size(), 1u) << "the same Slurm job";
  ASSERT_EQ(job_.attempts().size(), 2u);
  EXPECT_EQ(job_.attempts()[0].outcome, LaunchOutcome::kRequeued);
  EXPECT_EQ(ledger_.entries().back().cause.kind, InterruptionKind::kRequeued)
      << "named once the requeue shows";
  train("8812345", 1, 3000, step, 5);
  tick();
  ASSERT_FALSE(ledger_.open());
  ASSERT_EQ(ledger_.entries().size(), 1u);
  EXPECT_EQ(ledger_.entries().back().cause.kind, InterruptionKind::kRequeued);
  EXPECT_EQ(ledger_.totals().count(InterruptionKind::kNodeLost)
                ? ledger_.totals().at(InterruptionKind::kNodeLost).count
                : 0u,
            0u);
  EXPECT_EQ(ledger_.totals().at(InterruptionKind::kRequeued).count, 1u);
}

// Preemption: the scheduler's SIGTERM ends every rank; the agent, root, saw how.
TEST_F(JobRuns, RanksEndedBySigtermThenRelaunchedArePreempted) {
  const int64_t step = train("8812345", 0, 1000, 0, 5);
  report({killed(rank_of("8812345", 0, 0, step, 1000), SIGTERM),
          killed(rank_of("8812345", 0, 1, step, 1000), SIGTERM)});
  clock_.advance(Millis(500));
  tick();
  ASSERT_TRUE(ledger_.open());
  EXPECT_EQ(ledger_.entries().back().cause.kind, InterruptionKind::kPreempted);
  clock_.advance(Millis(30'000));
  train("8812345", 1, 3000, 40, 5);
  tick();
  EXPECT_EQ(job_.attempts()[0].outcome, LaunchOutcome::kPreempted);
  ASSERT_FALSE(ledger_.open());
  EXPECT_EQ(ledger_.entries().back().cause.kind, InterruptionKind::kPreempted);
  EXPECT_TRUE(ledger_.entries().back().restarted);
}

// A run that failed and was submitted again: the ledger's interruption closes when the new
// run trains, as a restart.
TEST_F(JobRuns, AFailedRunSubmittedAgainClosesItsInterruptionWhenTheNewRunTrains) {
  const int64_t step = train("runA", 0, 1000, 0, 5);
  report({killed(rank_of("runA", 0, 0, step, 1000), SIGKILL), rank_of("runA", 0, 1, step, 1000)});
  clock_.advance(Millis(500));
  tick();
  ASSERT_TRUE(ledger_.open());
  clock_.advance(Millis(60'000));
  train("runB", 0, 2000, 0, 5);
  tick();
  ASSERT_FALSE(ledger_.open());
  const Interruption& i = ledger_.entries().back();
  EXPECT_EQ(i.cause.kind, InterruptionKind::kSignal);
  EXPECT_TRUE(i.restarted);
  EXPECT_EQ(job_.attempt(i.attempt)->run, 1);
  EXPECT_EQ(job_.runs()[0].outcome, LaunchOutcome::kFailed);
}

// The same run submitted again at once, between two verdicts: no verdict showed rank 0
// SIGKILLed, yet run 1 failed, and the time until run 2 trains is lost.
TEST_F(JobRuns, AFailedRunSubmittedAgainWithinTheSecondIsStillAnInterruption) {
  const int64_t step = train("runA", 0, 1000, 0, 5);
  tick();
  ASSERT_FALSE(ledger_.open());
  report({killed(rank_of("runA", 0, 0, step, 1000), SIGKILL), rank_of("runA", 0, 1, step, 1000)});
  const MonoTime killed_at = clock_.monotonic_time();
  clock_.advance(Millis(200));
  train("runB", 0, 2000, 0, 2);
  tick();
  ASSERT_EQ(job_.attempts().front().outcome, LaunchOutcome::kFailed);
  ASSERT_EQ(ledger_.entries().size(), 1u);
  EXPECT_FALSE(ledger_.open()) << "run 2 trains";
  const Interruption& i = ledger_.entries().back();
  EXPECT_EQ(i.attempt, 1);
  EXPECT_EQ(i.cause.kind, InterruptionKind::kSignal);
  EXPECT_EQ(i.cause.detail, "SIGKILL");
  EXPECT_EQ(i.failed_at, killed_at);
  EXPECT_TRUE(i.restarted);
  EXPECT_EQ(i.to_detect() + i.to_resume(clock_.monotonic_time()), Millis(2'200));
  EXPECT_EQ(ledger_.totals().at(InterruptionKind::kSignal).count, 1u);
}

// One report carries the restart and the death it follows (the agent saw both in one
// sample), the restart first: the attempt still ends on its ranks' last words, failed by
// the SIGKILL, not requeued as its ranks' previous report would say.
TEST_F(JobRuns, ARestartReportedBeforeTheDeathInOneReportEndsTheAttemptOnTheDeath) {
  const int64_t step = train("rdzv-1", 0, 1000, 0, 5);
  tick();
  clock_.advance(Millis(200));
  report({rank_of("rdzv-1", 1, 0, 0, 1000), killed(rank_of("rdzv-1", 0, 0, step, 1000), SIGKILL),
          rank_of("rdzv-1", 1, 1, 0, 1000), killed(rank_of("rdzv-1", 0, 1, step, 1000), SIGTERM)});
  ASSERT_EQ(job_.attempts().size(), 2u);
  EXPECT_EQ(job_.attempts()[0].outcome, LaunchOutcome::kFailed);
  ASSERT_TRUE(job_.attempts()[0].ending);
  EXPECT_EQ(job_.attempts()[0].ending->rank, 0);
  EXPECT_EQ(job_.ranks().at(0).last.attempt, 1);
  EXPECT_EQ(job_.ranks().at(1).last.attempt, 1);
  clock_.advance(Millis(800));
  tick();
  ASSERT_EQ(ledger_.entries().size(), 1u);
  EXPECT_EQ(ledger_.entries().back().cause.kind, InterruptionKind::kSignal);
  EXPECT_EQ(ledger_.entries().back().cause.detail, "SIGKILL");
}

// A rank that raised: named by its error, as a rank_failed finding would be.
TEST_F(JobRuns, ARankThatRaisedAndARestartWithinTheSecondIsNamedByItsError) {
  const int64_t step = train("rdzv-1", 0, 1000, 0, 5);
  tick();
  RankReport raised = rank_of("rdzv-1", 0, 1, step, 1000);
  raised.status = RankStatus::kFailed;
  raised.error = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\nTraceback...";
  report({rank_of("rdzv-1", 0, 0, step, 1000), raised});
  clock_.advance(Millis(300));
  train("rdzv-1", 1, 1000, 0, 1);
  tick();
  ASSERT_EQ(ledger_.entries().size(), 1u);
  const Interruption& i = ledger_.entries().back();
  EXPECT_EQ(i.code, FindingCode::kRankFailed);
  EXPECT_EQ(i.cause.kind, InterruptionKind::kGpuOom);
  EXPECT_EQ(i.cause.detail, "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB");
  EXPECT_EQ(i.message,
            "rank 1 failed: RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB; attempt 2 began "
            "before trainwatch saw it");
}

// The scheduler's SIGTERM and a relaunch within the second: preempted, as if seen.
TEST_F(JobRuns, APreemptionAndARelaunchWithinTheSecondIsPreempted) {
  const int64_t step = train("8812345", 0, 1000, 0, 5);
  tick();
  report({killed(rank_of("8812345", 0, 0, step, 1000), SIGTERM),
          killed(rank_of("8812345", 0, 1, step, 1000), SIGTERM)});
  clock_.advance(Millis(300));
  train("8812345", 1, 3000, 40, 2);
  tick();
  ASSERT_EQ(job_.attempts().front().outcome, LaunchOutcome::kPreempted);
  ASSERT_EQ(ledger_.entries().size(), 1u);
  EXPECT_EQ(ledger_.entries().back().cause.kind, InterruptionKind::kPreempted);
  EXPECT_EQ(ledger_.entries().back().cause.detail, "SIGTERM");
  EXPECT_FALSE(ledger_.open());
}

// A Slurm requeue whose new ranks report before the node's silence is noticed: its ranks
// were last seen running, so the interruption is the scheduler's, from the attempt's end.
TEST_F(JobRuns, ARequeueWithinTheSecondIsRequeued) {
  train("8812345", 0, 1000, 0, 5);
  tick();
  const MonoTime requeued_at = clock_.monotonic_time();
  train("8812345", 1, 3000, 30, 2);
  tick();
  ASSERT_EQ(job_.attempts().front().outcome, LaunchOutcome::kRequeued);
  ASSERT_EQ(ledger_.entries().size(), 1u);
  const Interruption& i = ledger_.entries().back();
  EXPECT_EQ(i.cause.kind, InterruptionKind::kRequeued);
  EXPECT_EQ(i.cause.detail, "relaunched while its ranks ran");
  EXPECT_EQ(i.failed_at, requeued_at) << "attempt 1 ended when attempt 2 began";
  EXPECT_EQ(i.message, "attempt 1 ended (requeued); attempt 2 began before trainwatch saw it");
  EXPECT_FALSE(ledger_.open());
  EXPECT_EQ(ledger_.totals().count(InterruptionKind::kRestarted), 0u);
}

// Ends that lost nothing to a failure: every rank finished, or a new run was submitted
// while the old one's ranks still trained. Neither is an interruption, seen or not.
TEST_F(JobRuns, ARunThatFinishedOrWasSupersededIsNoInterruption) {
  int64_t step = train("runA", 0, 1000, 0, 5);
  tick();
  report({finished(rank_of("runA", 0, 0, step, 1000)), finished(rank_of("runA", 0, 1, step, 1000))});
  clock_.advance(Millis(200));
  step = train("runB", 0, 2000, 0, 3);
  tick();
  train("runC", 0, 3000, 0, 3);
  tick();
  ASSERT_EQ(job_.attempts().size(), 3u);
  EXPECT_EQ(job_.attempts()[0].outcome, LaunchOutcome::kFinished);
  EXPECT_EQ(job_.attempts()[1].outcome, LaunchOutcome::kSuperseded);
  EXPECT_TRUE(ledger_.entries().empty());
  EXPECT_EQ(ledger_.count(), 0u);
}

// A memo stored between the restart and the ledger's next look: the server restarted from
// it still records attempt 1's SIGKILL, at the time it was seen.
TEST_F(JobRuns, AMemoKeepsAnEndingTheLedgerHasNotYetJudged) {
  const int64_t step = train("rdzv-1", 0, 1000, 0, 5);
  tick();
  report({rank_of("rdzv-1", 0, 0, step, 1000), killed(rank_of("rdzv-1", 0, 1, step, 1000), SIGKILL)});
  const SystemTime killed_wall = clock_.system_time();
  clock_.advance(Millis(300));
  train("rdzv-1", 1, 1000, 0, 1);
  const std::string memo = encode_job_memo(job_, ledger_, clock_.monotonic_time(), clock_.system_time());

  clock_.advance(Millis(10'000));
  JobState resumed("llama");
  InterruptionLedger ledger;
  ASSERT_TRUE(apply_job_memo(memo, resumed, ledger, clock_.monotonic_time(), clock_.system_time()).ok());
  EXPECT_EQ(ledger.attempt_seen(), 1);
  ASSERT_TRUE(resumed.attempts().front().ending);
  EXPECT_EQ(resumed.attempts().front().ending->rank, 1);
  EXPECT_EQ(resumed.attempts().front().ending->exit->signal, SIGKILL);
  auto look = [&] {
    ledger.observe(resumed, analyse(resumed, spec_, clock_.monotonic_time(), clock_.system_time()),
                   clock_.monotonic_time(), clock_.system_time());
  };
  look();
  ASSERT_EQ(ledger.entries().size(), 1u);
  EXPECT_EQ(ledger.entries().back().cause.detail, "SIGKILL");
  EXPECT_EQ(ledger.entries().back().failed_wall, killed_wall);
  NodeReport n = node_report("node-a", {rank_of("rdzv-1", 1, 0, 20, 1000), rank_of("rdzv-1", 1, 1, 20, 1000)},
                             Millis(1'000));
  ASSERT_TRUE(resumed.ingest(n, clock_.monotonic_time(), clock_.system_time()));
  look();
  EXPECT_EQ(ledger.entries().size(), 1u);
  EXPECT_FALSE(ledger.open());
  EXPECT_EQ(ledger.attempt_seen(), 2);

  // And once judged, a memo says so: a server restarted from it records nothing again.
  const std::string judged = encode_job_memo(resumed, ledger, clock_.monotonic_time(), clock_.system_time());
  JobState again("llama");
  InterruptionLedger again_ledger;
  ASSERT_TRUE(
      apply_job_memo(judged, again, again_ledger, clock_.monotonic_time(), clock_.system_time()).ok());
  again_ledger.observe(again, analyse(again, spec_, clock_.monotonic_time(), clock_.system_time()),
                       clock_.monotonic_time(), clock_.system_time());
  EXPECT_EQ(again_ledger.entries().size(), 1u);
}

// A memo from before the ledger judged attempts' endings: the failed attempts it lists were
// judged by their verdicts then, and are not recorded again.
TEST(JobRunsMemo, AMemoWithoutAttemptSeenJudgesNoEndingAgain) {
  const std::string memo = R"({"version":1,"attempts":[
    {"number":1,"launcher_attempt":0,"run_id":"a","started_ms":1700000000000,"outcome":"failed",
     "ended_ms":1700000060000},
    {"number":2,"launcher_attempt":1,"run_id":"a","started_ms":1700000060000}]})";
  JobState job("j");
  InterruptionLedger ledger;
  const SystemTime wall = from_unix_ms(1'700'001'000'000);
  ASSERT_TRUE(apply_job_memo(memo, job, ledger, MonoTime{}, wall).ok());
  EXPECT_EQ(ledger.attempt_seen(), 2);
  JobCheckSpec spec;
  ledger.observe(job, analyse(job, spec, MonoTime{}, wall), MonoTime{}, wall);
  EXPECT_TRUE(ledger.entries().empty());
}

TEST_F(JobRuns, AMemoKeepsRunsAttemptsAndHowEachEnded) {
  int64_t step = train("rdzv-1", 0, 1000, 0, 3);
  report({finished(rank_of("rdzv-1", 0, 0, step, 1000)), finished(rank_of("rdzv-1", 0, 1, step, 1000))});
  clock_.advance(Millis(5'000));
  step = train("runB", 0, 2000, 0, 3);
  tick();
  const std::string memo = encode_job_memo(job_, ledger_, clock_.monotonic_time(), clock_.system_time());

  clock_.advance(Millis(60'000));
  JobState resumed("llama");
  InterruptionLedger ledger;
  ASSERT_TRUE(apply_job_memo(memo, resumed, ledger, clock_.monotonic_time(), clock_.system_time()).ok());
  ASSERT_EQ(resumed.runs().size(), 2u);
  EXPECT_EQ(resumed.runs()[0].run_id, "rdzv-1");
  EXPECT_EQ(resumed.runs()[0].outcome, LaunchOutcome::kFinished);
  EXPECT_EQ(resumed.runs()[0].ended_wall, job_.runs()[0].ended_wall);
  EXPECT_EQ(resumed.runs()[1].outcome, LaunchOutcome::kOpen);
  ASSERT_EQ(resumed.attempts().size(), 2u);
  EXPECT_EQ(resumed.attempts()[0].outcome, LaunchOutcome::kFinished);
  EXPECT_EQ(resumed.attempts()[1].run, 2);

  // The stored report of the current run goes on with it; its run is not begun again.
  NodeReport n;
  n.node = "node-a";
  n.ranks = {rank_of("runB", 0, 0, step, 2000), rank_of("runB", 0, 1, step, 2000)};
  ASSERT_TRUE(resumed.ingest(n, clock_.monotonic_time(), clock_.system_time()));
  EXPECT_EQ(resumed.runs().size(), 2u);
  EXPECT_EQ(resumed.attempts().size(), 2u);
}

// A memo stored before runs were kept: a run for each run id in a row of attempts.
TEST(JobRunsMemo, AMemoWithoutRunsReadsOneRunPerRunId) {
  const std::string memo = R"({"version":1,"attempts":[
    {"number":1,"launcher_attempt":0,"run_id":"a","started_ms":1700000000000},
    {"number":2,"launcher_attempt":1,"run_id":"a","started_ms":1700000060000},
    {"number":3,"launcher_attempt":0,"run_id":"b","started_ms":1700000900000}]})";
  JobState job("j");
  InterruptionLedger ledger;
  ASSERT_TRUE(apply_job_memo(memo, job, ledger, MonoTime{}, from_unix_ms(1'700'001'000'000)).ok());
  ASSERT_EQ(job.runs().size(), 2u);
  EXPECT_EQ(job.runs()[0].run_id, "a");
  EXPECT_EQ(job.runs()[1].run_id, "b");
  EXPECT_EQ(job.attempts()[1].run, 1);
  EXPECT_EQ(job.attempts()[2].run, 2);
}

TEST(LaunchOutcome, HowALaunchEndedFromItsRanksLastReports) {
  const RankReport running = rank_of("r", 0, 0, 10, 100);
  const RankReport done = finished(running);
  const RankReport sigterm = killed(running, SIGTERM);
  const RankReport sigkill = killed(running, SIGKILL);
  RankReport vanished = running;
  vanished.alive = false;
  RankReport raised = running;
  raised.status = RankStatus::kFailed;
  raised.error = "RuntimeError: boom";
  EXPECT_EQ(ended_as({&done, &done}, false), LaunchOutcome::kFinished);
  EXPECT_EQ(ended_as({&done, &sigterm}, true), LaunchOutcome::kPreempted);
  EXPECT_EQ(ended_as({&sigterm, &sigkill}, true), LaunchOutcome::kFailed);
  EXPECT_EQ(ended_as({&sigterm, &raised}, true), LaunchOutcome::kFailed);
  EXPECT_EQ(ended_as({&running, &vanished}, true), LaunchOutcome::kFailed) << "its agent saw it vanish";
  EXPECT_EQ(ended_as({&running, &running}, true), LaunchOutcome::kRequeued);
  EXPECT_EQ(ended_as({&running, &done}, false), LaunchOutcome::kSuperseded);
  for (auto o : {LaunchOutcome::kOpen, LaunchOutcome::kFinished, LaunchOutcome::kFailed,
                 LaunchOutcome::kPreempted, LaunchOutcome::kRequeued, LaunchOutcome::kSuperseded})
    EXPECT_EQ(launch_outcome_from_string(to_string(o)), o);
}

}  // namespace
}  // namespace trainwatch::jobs
