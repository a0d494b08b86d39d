// Job analysis on a manual clock: reports go in at chosen instants, the verdict comes out.
#include <cmath>
#include <csignal>
#include <functional>
#include <limits>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "fakes/manual_clock.h"
#include "jobs/analysis.h"
#include "jobs/interruption.h"
#include "jobs/job_memo.h"
#include "jobs/job_state.h"
#include "jobs/rank_health.h"
#include "jobs/rank_reports.h"

namespace trainwatch::jobs {
namespace {

using testing::exited;
using testing::ManualClock;
using testing::node_report;
using testing::training;

// A rank that has just failed with `error` at `step`.
RankReport failed_with(int rank, int64_t step, std::string error) {
  RankReport r = training(rank, step);
  r.status = RankStatus::kFailed;
  r.error = std::move(error);
  r.error_age_ms = 0;
  return r;
}

class JobAnalysis : public ::testing::Test {
 protected:
  JobAnalysis() : job_("llama") {
    spec_.world_size = 4;
    spec_.thresholds.step_timeout_min = Millis(2'000);
  }

  // One report from `node` carrying `ranks`, received now.
  void report(const std::string& node, std::vector<RankReport> ranks, bool final = false) {
    ASSERT_TRUE(job_.ingest(node_report(node, std::move(ranks), report_every_, final),
                            clock_.monotonic_time(), clock_.system_time()));
  }

  // Both nodes healthy at `step`, ranks 0-1 on node-a and 2-3 on node-b.
  void healthy(int64_t step) {
    report("node-a", {training(0, step), training(1, step)});
    report("node-b", {training(2, step), training(3, step)});
  }

  // Ten seconds of a healthy job at 10 steps a second, reports every second.
  int64_t run_healthy() {
    int64_t step = 0;
    for (int i = 0; i < 10; ++i) {
      healthy(step);
      clock_.advance(Millis(1'000));
      step += 10;
    }
    healthy(step);
    return step;
  }

  JobVerdict verdict() { return analyse(job_, spec_, clock_.monotonic_time(), clock_.system_time()); }

  // A job paced as real agents pace it: each node reports every 5 s, node-b 2.5 s after
  // node-a, so between reports one node's news is always seconds older than the other's.
  // The step timeout keeps its default floor (60 s): the fixture's 2 s is shorter than a
  // report interval.
  void pace() {
    report_every_ = Millis(5'000);
    spec_.thresholds.step_timeout_min = Millis(60'000);
  }

  // A rank stepping every 100 ms, as its node's report at paced_ms_ shows it: it stepped
  // just now.
  RankReport stepping(int rank) const {
    RankReport r = training(rank, paced_ms_ / 100);
    r.max_step_gap_ms = 100;
    return r;
  }

  // Moves the paced job on by `d` in 100 ms ticks. At each tick the nodes whose report is
  // due send it (unless their agent is lost), each rank as rank_at_ says, and then `check`
  // reads the verdict a person would read at that instant.
  void run_paced(
      Millis d, const std::function<void()>& check = [] {}) {
    for (int64_t t = 0; t < d.count(); t += 100) {
      clock_.advance(Millis(100));
      paced_ms_ += 100;
      if (paced_ms_ % 5'000 == 0) send_paced("node-a", {0, 1});
      if (paced_ms_ % 5'000 == 2'500) send_paced("node-b", {2, 3});
      check();
    }
  }

  void send_paced(const std::string& node, const std::vector<int>& ranks) {
    if (agents_lost_.count(node) != 0) return;
    std::vector<RankReport> out;
    out.reserve(ranks.size());
    for (int rank : ranks) out.push_back(rank_at_(rank));
    report(node, out);
  }

  // A rank that has made no step since stopped_ms, as its node's report at paced_ms_
  // shows it.
  RankReport stuck_since(int rank, int64_t stopped_ms) const {
    RankReport r = training(rank, stopped_ms / 100);
    r.last_step_age_ms = paced_ms_ - stopped_ms;
    return r;
  }

  static const Finding* find(const JobVerdict& v, FindingCode code) {
    for (const auto& f : v.findings) {
      if (f.code == code) return &f;
    }
    return nullptr;
  }

  ManualClock clock_;
  JobState job_;
  JobCheckSpec spec_;
  Millis report_every_{1'000};
  int64_t paced_ms_ = 0;
  std::function<RankReport(int rank)> rank_at_ = [this](int rank) { return stepping(rank); };
  std::set<std::string> agents_lost_;
};

TEST_F(JobAnalysis, HealthyJobHasNoFindings) {
  run_healthy();
  JobVerdict v = verdict();
  EXPECT_FALSE(v.down);
  EXPECT_EQ(v.phase, JobPhase::kTraining);
  EXPECT_TRUE(v.findings.empty()) << v.cause;
}

// gloo after a SIGKILL: the victim vanishes without a word, its peers raise "Connection
// closed by peer" a few hundred ms later and report failed. The victim is blamed.
TEST_F(JobAnalysis, TheRankThatVanishedSilentlyIsBlamedNotThePeersThatFailedAfterIt) {
  int64_t step = run_healthy();
  clock_.advance(Millis(300));
  RankReport victim = training(2, step);
  victim.alive = false;
  victim.state = '?';
  victim.gone_age_ms = 100;
  auto peer = [&](int rank) {
    RankReport r = failed_with(
        rank, step,
        "RuntimeError: [/gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:29500");
    r.alive = rank == 3;  // rank 3's process still exiting
    return r;
  };
  // node-a's failures arrive first: the verdict waits for node-b.
  report("node-a", {peer(0), peer(1)});
  JobVerdict early = verdict();
  EXPECT_TRUE(early.down);
  EXPECT_TRUE(early.undecided);
  clock_.advance(Millis(100));
  report("node-b", {victim, peer(3)});
  JobVerdict v = verdict();
  ASSERT_TRUE(v.down);
  EXPECT_FALSE(v.undecided);
  EXPECT_EQ(v.phase, JobPhase::kFailed);
  EXPECT_EQ(v.findings.front().code, FindingCode::kRankGone);
  EXPECT_EQ(v.findings.front().ranks, std::vector<int>{2});
  EXPECT_EQ(
      v.cause.rfind("rank 2 (node-b, pid 102) vanished at step " + std::to_string(step) +
                        " while training, without reporting an error (exit status unknown to the agent); "
                        "ranks 0-1,3 failed after it (RuntimeError: [/gloo/transport/tcp/pair.cc:598] "
                        "Connection closed by peer",
                    0),
      0u)
      << v.cause;
}

// The agent living in local rank 0: rank 1 is killed, rank 0 fails on the broken
// connection and its error reaches the server before the agent saw rank 1 gone. The
// verdict waits for the agent's next word instead of blaming rank 0.
TEST_F(JobAnalysis, APeerFailureReportedBeforeItsCauseWaitsForTheAgentsNextReport) {
  int64_t step = run_healthy();
  clock_.advance(Millis(300));
  RankReport failed = failed_with(
      0, step,
      "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:28037");
  RankReport not_yet_seen_gone = training(1, step);
  report("node-a", {failed, not_yet_seen_gone});
  JobVerdict early = verdict();
  EXPECT_TRUE(early.down);
  EXPECT_EQ(early.findings.front().ranks, std::vector<int>{0});
  EXPECT_TRUE(early.undecided) << "rank 0's own node may not yet have seen why it failed";

  clock_.advance(Millis(400));
  RankReport victim = training(1, step);
  victim.alive = false;
  victim.state = '?';
  victim.gone_age_ms = 500;
  report("node-a", {failed, victim}, /*final=*/true);
  JobVerdict v = verdict();
  ASSERT_TRUE(v.down);
  EXPECT_FALSE(v.undecided);
  EXPECT_EQ(v.findings.front().code, FindingCode::kRankGone);
  EXPECT_EQ(v.findings.front().ranks, std::vector<int>{1});
  EXPECT_NE(v.cause.find("rank 0 failed after it"), std::string::npos) << v.cause;
}

// When no peer turns out to have died first, the failed rank is named once the grace is over.
TEST_F(JobAnalysis, APeerFailureWithNoPeerSeenGoneIsNamedAfterTheGrace) {
  int64_t step = run_healthy();
  RankReport failed = failed_with(2, step, "torch.distributed.DistNetworkError: Connection reset by peer");
  report("node-b", {failed, training(3, step)});
  EXPECT_TRUE(verdict().undecided);
  clock_.advance(Millis(1'000));
  report("node-a", {training(0, step), training(1, step)});
  failed.error_age_ms = 1'000;
  report("node-b", {failed, training(3, step)});
  EXPECT_TRUE(verdict().undecided);
  clock_.advance(Millis(1'100));
  JobVerdict v = verdict();
  ASSERT_TRUE(v.down);
  EXPECT_FALSE(v.undecided);
  EXPECT_EQ(v.findings.front().code, FindingCode::kRankFailed);
  EXPECT_EQ(v.findings.front().ranks, std::vector<int>{2});

  // An error of the rank's own is named at once.
  JobState other("other");
  NodeReport n;
  n.node = "node-a";
  n.report_every = Millis(1'000);
  n.ranks = {failed_with(0, 5, "ValueError: bad batch"), training(1, 5)};
  ASSERT_TRUE(other.ingest(n, clock_.monotonic_time(), clock_.system_time()));
  JobCheckSpec spec;
  spec.world_size = 2;
  JobVerdict at_once = analyse(other, spec, clock_.monotonic_time(), clock_.system_time());
  EXPECT_TRUE(at_once.down);
  EXPECT_FALSE(at_once.undecided);
}

// torchrun, seeing rank 3 SIGKILLed, sends SIGTERM to the others; the agent's next look
// finds rank 2 ended by that SIGTERM and rank 3 by the SIGKILL at the same instant. The
// launcher's teardown is not the failure: rank 3 is named, not the lower rank.
TEST_F(JobAnalysis, OfDeathsSeenAtOnceTheLaunchersSigtermIsBlamedLast) {
  int64_t step = run_healthy();
  clock_.advance(Millis(300));
  RankReport torn_down = training(2, step);
  torn_down.alive = false;
  torn_down.state = '?';
  torn_down.gone_age_ms = 100;
  torn_down.exit = ProcessExit{-1, 15, false, false};
  RankReport victim = training(3, step);
  victim.alive = false;
  victim.state = '?';
  victim.gone_age_ms = 100;
  victim.exit = ProcessExit{-1, 9, false, false};
  report("node-b", {torn_down, victim});
  JobVerdict v = verdict();
  ASSERT_TRUE(v.down);
  EXPECT_EQ(v.findings.front().ranks, std::vector<int>{3}) << v.cause;
  EXPECT_EQ(v.cause.rfind("rank 3 (node-b, pid 103) was killed by SIGKILL", 0), 0u) << v.cause;
}

// Where the agent heard from the kernel how the rank ended, the alert says so.
TEST_F(JobAnalysis, AKilledRankIsNamedWithTheSignalThatKilledIt) {
  int64_t step = run_healthy();
  clock_.advance(Millis(300));
  RankReport victim = training(2, step);
  victim.alive = false;
  victim.state = '?';
  victim.gone_age_ms = 100;
  victim.exit = ProcessExit{-1, 9, false, true};
  report("node-b", {victim, training(3, step)});
  JobVerdict v = verdict();
  ASSERT_TRUE(v.down);
  EXPECT_EQ(v.findings.front().code, FindingCode::kRankGone);
  EXPECT_EQ(
      v.cause.rfind("rank 2 (node-b, pid 102) was killed by SIGKILL (the kernel's OOM killer) at step " +
                        std::to_string(step) + " while training, without reporting an error",
                    0),
      0u)
      << v.cause;
  EXPECT_EQ(v.cause.find("exit status unknown"), std::string::npos) << v.cause;

  victim.exit = ProcessExit{3, 0, false, false};
  report("node-b", {victim, training(3, step)});
  EXPECT_NE(verdict().cause.find("rank 2 (node-b, pid 102) exited with code 3 at step "), std::string::npos);
}

// The node dies: its reports stop, and the ranks of the other node hang in their next
// collective, so their own reports show them making no step since.
TEST_F(JobAnalysis, ANodeThatGoesSilentIsDownAfterThreeMissedReportsOnTheServersClock) {
  spec_.thresholds.step_timeout_min = Millis(60'000);  // the node's silence is under test, not the stall
  const int64_t step = run_healthy();
  auto hanging = [&](int rank, int64_t ms) {
    RankReport r = training(rank, step);
    r.last_step_age_ms = ms;
    return r;
  };
  for (int i = 1; i <= 3; ++i) {
    clock_.advance(Millis(1'000));
    report("node-a", {hanging(0, 1'000 * i), hanging(1, 1'000 * i)});
  }
  EXPECT_FALSE(verdict().down) << verdict().cause;  // exactly 3 s: not yet more than 3 missed
  clock_.advance(Millis(100));
  report("node-a", {hanging(0, 3'100), hanging(1, 3'100)});
  JobVerdict v = verdict();
  ASSERT_TRUE(v.down);
  EXPECT_EQ(v.findings.front().code, FindingCode::kNodeSilent);
  EXPECT_EQ(v.findings.front().ranks, (std::vector<int>{2, 3}));
  EXPECT_NE(v.cause.find("node node-b has sent no report for 3s"), std::string::npos) << v.cause;
}

TEST_F(JobAnalysis, AStoppedProcessIsNamedAtOnceWithTheRanksWaitingForIt) {
  int64_t step = run_healthy();
  clock_.advance(Millis(1'500));
  RankReport frozen = training(1, step);
  frozen.state = 'T';
  frozen.last_step_age_ms = 1'500;
  RankReport r0 = training(0, step + 1);
  r0.last_step_age_ms = 1'400;
  report("node-a", {r0, frozen});
  // node-b's ranks wait for it too, and their own node's report says so.
  RankReport r2 = training(2, step + 1), r3 = training(3, step + 1);
  r2.last_step_age_ms = r3.last_step_age_ms = 1'400;
  report("node-b", {r2, r3});
  JobVerdict v = verdict();
  ASSERT_TRUE(v.down);
  EXPECT_EQ(v.findings.front().code, FindingCode::kRankStopped);
  EXPECT_EQ(v.cause.rfind("rank 1 (node-a, pid 101) is stopped (process state T) at step " +
                              std::to_string(step) + "; ranks 0,2-3 waiting since ",
                          0),
            0u)
      << v.cause;
}

TEST_F(JobAnalysis, NoRankAdvancingWithinTheStepTimeoutIsAStallNamingTheRanksBehind) {
  int64_t step = run_healthy();
  // The learned step timeout: 5 x the longest gap, at least the 2 s floor. Nobody reported
  // a gap, so the floor applies.
  EXPECT_EQ(verdict().timeouts.step, Millis(2'000));
  for (int i = 1; i <= 3; ++i) {
    clock_.advance(Millis(1'000));
    RankReport r0 = training(0, step + 1);
    r0.last_step_age_ms = 1'000 * i;
    RankReport r1 = training(1, step + 1);
    r1.last_step_age_ms = 1'000 * i;
    RankReport r2 = training(2, step);
    r2.last_step_age_ms = 1'000 * i;
    RankReport r3 = training(3, step + 1);
    r3.last_step_age_ms = 1'000 * i;
    report("node-a", {r0, r1});
    report("node-b", {r2, r3});
  }
  JobVerdict v = verdict();
  ASSERT_TRUE(v.down) << v.cause;
  EXPECT_EQ(v.findings.front().code, FindingCode::kJobStalled);
  EXPECT_EQ(v.findings.front().ranks, std::vector<int>{2});
  EXPECT_EQ(v.cause.rfind("rank 2 (node-b, pid 102) furthest behind at step " + std::to_string(step) +
                              " (others at step " + std::to_string(step + 1) +
                              "): no rank advanced for 3s (step timeout 2s)",
                          0),
            0u)
      << v.cause;
}

// Asynchronous work (or a rank not yet blocked on its peers): rank 2 stops while the
// others go on stepping, and it alone is hung once its own step timeout passes.
TEST_F(JobAnalysis, ARankLeftBehindWhileTheOthersAdvanceIsHung) {
  int64_t step = run_healthy();
  const int64_t stopped = step;
  for (int i = 1; i <= 3; ++i) {
    clock_.advance(Millis(1'000));
    step += 10;
    RankReport r2 = training(2, stopped);
    r2.last_step_age_ms = 1'000 * i;
    report("node-a", {training(0, step), training(1, step)});
    report("node-b", {r2, training(3, step)});
  }
  JobVerdict v = verdict();
  ASSERT_TRUE(v.down) << v.cause;
  EXPECT_EQ(v.findings.front().code, FindingCode::kRankHung);
  EXPECT_EQ(v.findings.front().ranks, std::vector<int>{2});
  EXPECT_EQ(v.cause, "rank 2 (node-b, pid 102) has made no step for 3s at step " + std::to_string(stopped) +
                         " while others reached step " + std::to_string(step) + " (step timeout 2s)");
}

// Its slot folder removed under it, a rank's agent cannot see it any more: its last report
// freezes. It is named as unwatched, with the file, and never called hung for that.
TEST_F(JobAnalysis, ARankWhoseSlotWasRemovedIsUnwatchedNotHung) {
  int64_t step = run_healthy();
  const std::string path = "/dev/shm/trainwatch/1000/llama.slots";
  for (int i = 1; i <= 5; ++i) {
    clock_.advance(Millis(1'000));
    step += 10;
    report("node-a", {training(0, step), training(1, step)});
    NodeReport b = testing::node_report("node-b", {training(3, step)}, report_every_);
    b.slots_removed.push_back({2, 102, path});
    ASSERT_TRUE(job_.ingest(b, clock_.monotonic_time(), clock_.system_time()));
  }
  JobVerdict v = verdict();
  EXPECT_FALSE(v.down) << v.cause;
  EXPECT_EQ(find(v, FindingCode::kRankHung), nullptr);
  const Finding* unwatched = find(v, FindingCode::kSlotRemoved);
  ASSERT_NE(unwatched, nullptr);
  EXPECT_EQ(unwatched->severity, Severity::kWarning);
  EXPECT_EQ(unwatched->ranks, std::vector<int>{2});
  EXPECT_EQ(unwatched->message.rfind("rank 2 (node-b, pid 102) cannot be watched: its slot file " + path, 0),
            0u)
      << unwatched->message;

  // A note about another process in that place is not about this rank.
  NodeReport b = testing::node_report("node-b", {training(3, step)}, report_every_);
  b.slots_removed.push_back({2, 999, path});
  ASSERT_TRUE(job_.ingest(b, clock_.monotonic_time(), clock_.system_time()));
  EXPECT_EQ(find(verdict(), FindingCode::kSlotRemoved), nullptr);
}

// Ranks that stop at one step stop at slightly different instants (the last to arrive at
// the collective made the step last). In the moment between the first rank's step timeout
// and the last one's, the first is not hung "while others advance": nobody is ahead of it.
TEST_F(JobAnalysis, ARankLevelWithTheOthersIsNeverHungAheadOfTheWholeJobStalling) {
  int64_t step = run_healthy();
  clock_.advance(Millis(1'000));
  RankReport r0 = training(0, step + 1);
  r0.last_step_age_ms = 900;
  RankReport r1 = training(1, step + 1);
  r1.last_step_age_ms = 900;
  report("node-a", {r0, r1});
  report("node-b", {training(2, step + 1), training(3, step + 1)});
  clock_.advance(Millis(1'500));
  JobVerdict v = verdict();
  EXPECT_FALSE(v.down) << v.cause;
  clock_.advance(Millis(1'000));
  v = verdict();
  ASSERT_TRUE(v.down) << v.cause;
  EXPECT_EQ(v.findings.front().code, FindingCode::kJobStalled) << v.cause;
}

TEST_F(JobAnalysis, ACheckpointIsNotAStallUntilItsOwnTimeout) {
  spec_.thresholds.checkpoint_timeout = Millis(10'000);
  int64_t step = run_healthy();
  for (int i = 1; i <= 11; ++i) {
    clock_.advance(Millis(1'000));
    RankReport r0 = training(0, step);
    r0.status = RankStatus::kCheckpointing;
    r0.checkpoint.state = CheckpointState::kInProgress;
    r0.checkpoint.step = step;
    r0.checkpoint.begin_age_ms = 1'000 * i;
    r0.last_step_age_ms = 1'000 * i;
    std::vector<RankReport> b = {training(2, step), training(3, step)};
    for (auto& r : b) r.last_step_age_ms = 1'000 * i;
    RankReport r1 = training(1, step);
    r1.last_step_age_ms = 1'000 * i;
    report("node-a", {r0, r1});
    report("node-b", b);
    JobVerdict v = verdict();
    EXPECT_EQ(v.phase, JobPhase::kCheckpointing);
    if (i <= 10) {
      EXPECT_FALSE(v.down) << i << ": " << v.cause;
    } else {
      ASSERT_TRUE(v.down);
      EXPECT_EQ(v.findings.front().code, FindingCode::kCheckpointTooLong);
      EXPECT_NE(v.cause.find("has been writing the checkpoint of step " + std::to_string(step) + " for 11s"),
                std::string::npos)
          << v.cause;
    }
  }
}

// Five steps in a row with a NaN loss, the run still going on: a page naming its first step.
TEST_F(JobAnalysis, AStreakOfNonFiniteLossesIsDown) {
  int64_t step = run_healthy();
  clock_.advance(Millis(1'000));
  const std::string when = clock_time(clock_.system_time());
  RankReport r0 = training(0, step + 10);
  r0.loss = std::numeric_limits<double>::quiet_NaN();
  r0.nonfinite_total = 5;
  r0.nonfinite_first_step = step + 6;
  r0.nonfinite_first_age_ms = 0;
  r0.nonfinite_run = 5;
  report("node-a", {r0, training(1, step + 10)});
  JobVerdict v = verdict();
  ASSERT_TRUE(v.down);
  EXPECT_EQ(v.findings.front().code, FindingCode::kLossNotFinite);
  EXPECT_EQ(v.findings.front().ranks, std::vector<int>{0});
  EXPECT_EQ(v.cause, "rank 0 (node-a, pid 100) has reported non-finite losses since step " +
                         std::to_string(step + 6) + " (" + when + "): 5 so far, NaN at step " +
                         std::to_string(step + 10));
}

// One NaN, its run still the rank's last loss: a warning on the page, no page, with a count
// that says how close the page is.
TEST_F(JobAnalysis, OneNonFiniteLossIsAWarningNotAPage) {
  int64_t step = run_healthy();
  clock_.advance(Millis(1'000));
  const std::string when = clock_time(clock_.system_time());
  RankReport r0 = training(0, step + 10);
  r0.loss = std::numeric_limits<double>::infinity();
  r0.nonfinite_total = 1;
  r0.nonfinite_first_step = step + 10;
  r0.nonfinite_first_age_ms = 0;
  r0.nonfinite_run = 1;
  report("node-a", {r0, training(1, step + 10)});
  JobVerdict v = verdict();
  EXPECT_FALSE(v.down) << v.cause;
  EXPECT_FALSE(v.notify) << "a finding on the page, not a message";
  EXPECT_EQ(v.cause, "rank 0 (node-a, pid 100) reported a non-finite loss at step " +
                         std::to_string(step + 10) + " (" + when +
                         "): inf, 1 in a row so far (a page follows at 5 in a row)");
}

// A rank whose run of non-finite losses began at first_step, which its agent saw age_ms
// before this report; `total` of them so far.
RankReport nan_since(RankReport r, int64_t first_step, int64_t age_ms, uint64_t total) {
  r.loss = std::numeric_limits<double>::quiet_NaN();
  r.nonfinite_total = total;
  r.nonfinite_first_step = first_step;
  r.nonfinite_first_age_ms = age_ms;
  return r;
}

// A NaN spreads through the next all-reduce: rank 1 went bad at step 310, every other rank
// a step later. node-b reports first, showing ranks 2-3 bad; the verdict waits for node-a,
// which has not reported since, and from its report on names rank 1 and step 310 at every
// instant, however the two nodes' reports interleave.
TEST_F(JobAnalysis, TheRankWhoseLossWentBadFirstIsNamedAndStaysNamed) {
  pace();
  run_paced(Millis(31'000));
  const int64_t bad_ms = paced_ms_;  // rank 1's step 310; the others' step 311 comes 100 ms later
  const std::string when = clock_time(clock_.system_time());
  rank_at_ = [&](int rank) {
    RankReport r = stepping(rank);
    const int64_t first_ms = rank == 1 ? bad_ms : bad_ms + 100;
    return nan_since(r, first_ms / 100, paced_ms_ - first_ms,
                     static_cast<uint64_t>(r.step - first_ms / 100 + 1));
  };
  int undecided = 0, named = 0;
  run_paced(Millis(20'000), [&] {
    if (paced_ms_ < 32'500) return;
    JobVerdict v = verdict();
    ASSERT_TRUE(v.down) << paced_ms_;
    ASSERT_EQ(v.findings.front().code, FindingCode::kLossNotFinite) << v.cause;
    if (paced_ms_ < 35'000) {
      EXPECT_TRUE(v.undecided) << "node-a has not reported since the NaN began, at " << paced_ms_ << " ms";
      ++undecided;
      return;
    }
    EXPECT_FALSE(v.undecided) << paced_ms_;
    EXPECT_EQ(v.findings.front().ranks, std::vector<int>{1});
    const std::string head =
        "rank 1 (node-a, pid 101) has reported non-finite losses since step 310 (" + when + "): ";
    EXPECT_EQ(v.cause.rfind(head, 0), 0u) << "at " << paced_ms_ << " ms: " << v.cause;
    EXPECT_NE(v.cause.find("; ranks 0,2-3 followed from step 311"), std::string::npos) << v.cause;
    ++named;
  });
  EXPECT_EQ(undecided, 25);
  EXPECT_EQ(named, 161);  // every 100 ms from node-a's report at 35 s to 51 s
}

// Two ranks whose runs began at the same step: the one seen first is named; seen at the
// same instant too, the lower rank.
TEST_F(JobAnalysis, ANonFiniteTieGoesToTheEarlierTimeThenTheLowerRank) {
  int64_t step = run_healthy();
  clock_.advance(Millis(1'000));
  const int64_t first = step + 5;
  report("node-a", {nan_since(training(0, step + 10), first, 300, 6), training(1, step + 10)});
  report("node-b", {training(2, step + 10), nan_since(training(3, step + 10), first, 400, 6)});
  JobVerdict v = verdict();
  ASSERT_TRUE(v.down);
  EXPECT_EQ(v.findings.front().ranks, std::vector<int>{3}) << v.cause;
  EXPECT_NE(v.cause.find("; rank 0 followed from step " + std::to_string(first)), std::string::npos)
      << v.cause;

  clock_.advance(Millis(1'000));
  report("node-a", {nan_since(training(0, step + 20), first, 1'400, 16), training(1, step + 20)});
  report("node-b", {training(2, step + 20), nan_since(training(3, step + 20), first, 1'400, 16)});
  v = verdict();
  EXPECT_EQ(v.findings.front().ranks, std::vector<int>{3}) << "a run's time is fixed when first heard of";

  clock_.advance(Millis(1'000));
  report("node-a", {nan_since(training(0, step + 30), step + 30, 0, 1),
                    nan_since(training(1, step + 30), step + 30, 0, 1)});
  report("node-b", {training(2, step + 30), training(3, step + 30)});
  v = verdict();
  EXPECT_EQ(v.findings.front().ranks, std::vector<int>{0}) << v.cause;
}

// One NaN, then good losses again: no alert remains, and the count and the step stay with
// the rank for the API and /metrics.
TEST_F(JobAnalysis, ASingleNanThatRecoversLeavesItsCountAndStep) {
  int64_t step = run_healthy();
  clock_.advance(Millis(1'000));
  const std::string when = clock_time(clock_.system_time());
  report("node-a", {nan_since(training(0, step + 10), step + 10, 0, 1), training(1, step + 10)});
  EXPECT_FALSE(verdict().down) << verdict().cause;
  clock_.advance(Millis(1'000));
  RankReport recovered = training(0, step + 20);
  recovered.loss = 2.5;
  recovered.nonfinite_total = 1;
  recovered.nonfinite_first_step = step + 10;
  recovered.nonfinite_first_age_ms = 1'000;
  recovered.nonfinite_run = 0;
  report("node-a", {recovered, training(1, step + 20)});
  report("node-b", {training(2, step + 20), training(3, step + 20)});
  JobVerdict v = verdict();
  EXPECT_FALSE(v.down) << v.cause;
  EXPECT_EQ(v.cause, "rank 0 (node-a, pid 100) reported non-finite losses from step " +
                         std::to_string(step + 10) + " (" + when +
                         "), 1 in all, and trains on with finite losses since");
  const RankRecord& r0 = job_.ranks().at(0);
  EXPECT_EQ(r0.last.nonfinite_total, 1u);
  EXPECT_EQ(r0.nonfinite_first_step, step + 10);
  // The finding stays kNonfiniteNoticeFor, the count and the step for good.
  for (int i = 0; i < 300; ++i) {
    clock_.advance(Millis(1'000));
    step += 10;
    recovered.step = step + 20;
    recovered.step_reports = static_cast<uint64_t>(step + 21);
    recovered.nonfinite_first_age_ms = 1'000 * (i + 2);
    report("node-a", {recovered, training(1, step + 20)});
    report("node-b", {training(2, step + 20), training(3, step + 20)});
  }
  v = verdict();
  EXPECT_EQ(find(v, FindingCode::kLossNotFinite), nullptr) << v.cause;
  EXPECT_EQ(job_.ranks().at(0).last.nonfinite_total, 1u);
}

// Synchronous training: every rank steps at the slowest one's pace, so the step interval
// names nobody; the CPU each rank burns a step does.
TEST_F(JobAnalysis, AStragglerIsAWarningNamedByItsCostAStep) {
  for (int i = 0; i <= 6; ++i) {
    std::vector<RankReport> a, b;
    for (int rank = 0; rank < 4; ++rank) {
      RankReport r = training(rank, 10 * i + 10);
      r.cpu_s = (rank == 3 ? 0.030 : 0.010) * 10 * i;  // 30 ms a step against 10 ms
      (rank < 2 ? a : b).push_back(r);
    }
    report("node-a", a);
    report("node-b", b);
    clock_.advance(Millis(1'000));
  }
  JobVerdict v = verdict();
  EXPECT_FALSE(v.down) << v.cause;
  ASSERT_EQ(v.findings.size(), 1u) << v.cause;
  EXPECT_EQ(v.findings[0].code, FindingCode::kStraggler);
  EXPECT_EQ(v.findings[0].severity, Severity::kWarning);
  EXPECT_EQ(v.findings[0].ranks, std::vector<int>{3});
  EXPECT_EQ(
      v.cause.rfind("rank 3 (node-b, pid 103) is a straggler: 30.0 ms of CPU a step, 3.0x the job median", 0),
      0u)
      << v.cause;
}

// Ranks that mark their collectives: every rank steps every 300 ms (synchronous), the
// agents' samples find ranks 0-2 in all_reduce two thirds of the time and rank 3 never, so
// rank 3 takes 300 ms to reach the collective where the others take 100 ms. Rank 0 hosts
// its node's agent and burns more CPU than anyone: that names nobody.
TEST_F(JobAnalysis, AStragglerIsTheRankThatReachesTheCollectiveLast) {
  for (int i = 0; i <= 8; ++i) {
    std::vector<RankReport> a, b;
    for (int rank = 0; rank < 4; ++rank) {
      RankReport r = training(rank, 60 + 4 * i);
      r.cpu_s = (rank == 0 ? 0.050 : 0.010) * 4 * i;
      r.collective = CollectiveReport{static_cast<uint64_t>(60 + 4 * i), "all_reduce", rank != 3,
                                      rank == 3 ? 0 : 800 * i, 1'200 * i};
      (rank < 2 ? a : b).push_back(r);
    }
    report("node-a", a);
    report("node-b", b);
    clock_.advance(Millis(1'200));
  }
  JobVerdict v = verdict();
  EXPECT_FALSE(v.down) << v.cause;
  ASSERT_EQ(v.findings.size(), 1u) << v.cause;
  EXPECT_EQ(v.findings[0].code, FindingCode::kStraggler);
  EXPECT_EQ(v.findings[0].ranks, std::vector<int>{3});
  EXPECT_EQ(v.cause.rfind("rank 3 (node-b, pid 103) is a straggler: 300.0 ms a step to reach the collective, "
                          "3.0x the job median (100.0 ms) over the last ",
                          0),
            0u)
      << v.cause;
}

// Rank 3 burns three times the CPU of the others a step, as above, but only over the
// first steps of its process (warm-up: compilation, autotuning), or only while it makes no
// step (a busy loop after its last step): neither is a straggler.
TEST_F(JobAnalysis, NoStragglerDuringWarmUpNorForARankThatStoppedStepping) {
  auto run = [&](int64_t first_step, int64_t steps_a_second, bool rank_3_stops) {
    for (int i = 0; i <= 6; ++i) {
      std::vector<RankReport> a, b;
      for (int rank = 0; rank < 4; ++rank) {
        const bool stopped = rank_3_stops && rank == 3 && i >= 4;
        RankReport r = training(rank, first_step + steps_a_second * (stopped ? 4 : i));
        // The agent measures step gaps between steps it saw: none for a stopped rank.
        r.max_step_gap_ms = stopped ? 0 : 1'000 / steps_a_second;
        if (stopped) r.last_step_age_ms = 1'000 * (i - 4);
        r.cpu_s = (rank == 3 ? 0.030 : 0.010) * static_cast<double>(steps_a_second * i);
        (rank < 2 ? a : b).push_back(r);
      }
      report("node-a", a);
      report("node-b", b);
      clock_.advance(Millis(1'000));
    }
  };
  run(0, 5, false);  // steps 0 to 30: warm-up all along
  EXPECT_EQ(find(verdict(), FindingCode::kStraggler), nullptr) << verdict().cause;
  run(100, 10, true);  // past warm-up, rank 3 stops at step 140 and spins
  EXPECT_EQ(find(verdict(), FindingCode::kStraggler), nullptr) << verdict().cause;
}

TEST_F(JobAnalysis, ARankClaimedByTwoNodesIsAFinding) {
  int64_t step = run_healthy();
  report("node-c", {training(3, step)});
  JobVerdict v = verdict();
  std::vector<std::string> claimed;
  for (const auto& f : v.findings) {
    if (f.code == FindingCode::kRankClaimedTwice) claimed.push_back(f.message);
  }
  EXPECT_EQ(claimed, std::vector<std::string>{"rank 3 is reported by two nodes: node-b and node-c"})
      << v.cause;
}

TEST_F(JobAnalysis, AllRanksFinishedClosesCleanlyEvenAsTheirProcessesAndAgentsGo) {
  int64_t step = run_healthy();
  std::vector<RankReport> a, b;
  for (int rank = 0; rank < 4; ++rank) {
    RankReport r = training(rank, step);
    r.status = RankStatus::kFinished;
    r.alive = rank % 2 == 0;
    (rank < 2 ? a : b).push_back(r);
  }
  report("node-a", a, true);
  report("node-b", b, true);
  clock_.advance(Millis(60'000));
  JobVerdict v = verdict();
  EXPECT_FALSE(v.down) << v.cause;
  EXPECT_EQ(v.phase, JobPhase::kFinished);
}

// torch.save on a full disk raises OSError, the script catches it and reports it, then torch
// aborts: the alert quotes the error the rank reported before the signal, and the ledger
// books a full disk.
TEST_F(JobAnalysis, ARankThatDiesAfterReportingAnErrorIsNamedWithThatError) {
  int64_t step = run_healthy();
  const std::string when = clock_time(clock_.system_time());
  RankReport r0 = training(0, step);
  r0.status = RankStatus::kCheckpointing;
  r0.error = "OSError: [Errno 28] No space left on device\nTraceback...";
  r0.error_age_ms = 0;
  report("node-a", {r0, training(1, step)});
  clock_.advance(Millis(1'000));
  r0.error_age_ms = 1'000;
  report("node-a", {exited(r0, 0, SIGABRT), training(1, step)});
  report("node-b", {training(2, step), training(3, step)});
  JobVerdict v = verdict();
  ASSERT_TRUE(v.down);
  EXPECT_EQ(v.cause, "rank 0 (node-a, pid 100) was killed by SIGABRT at step " + std::to_string(step) +
                         " while checkpointing, after reporting an error at " + when +
                         ": OSError: [Errno 28] No space left on device");
  InterruptionLedger ledger;
  ledger.observe(job_, v, clock_.monotonic_time(), clock_.system_time());
  ASSERT_EQ(ledger.entries().size(), 1u);
  EXPECT_EQ(ledger.entries()[0].cause.kind, InterruptionKind::kDiskFull);
}

TEST_F(JobAnalysis, AFailedRankAloneIsDownWithItsError) {
  int64_t step = run_healthy();
  report("node-a", {training(0, step), failed_with(1, step, "ValueError: bad batch")});
  report("node-b", {training(2, step), training(3, step)});
  JobVerdict v = verdict();
  ASSERT_TRUE(v.down);
  EXPECT_FALSE(v.undecided);
  EXPECT_EQ(
      v.cause.rfind(
          "rank 1 (node-a, pid 101) failed at step " + std::to_string(step) + ": ValueError: bad batch", 0),
      0u);
}

// All ranks stop progressing (say, starved of CPU) while still alive and reporting: the job's
// throughput falls to nothing, in the unit it has always reported.
TEST_F(JobAnalysis, AThroughputDropIsAWarningInTheJobsOwnUnit) {
  spec_.thresholds.step_timeout = Millis(60'000);
  int64_t step = 0;
  uint64_t tokens = 0;
  auto both = [&](int64_t s, uint64_t t, int64_t no_step_ms) {
    std::vector<RankReport> a, b;
    for (int rank = 0; rank < 4; ++rank) {
      RankReport r = training(rank, s);
      r.tokens = t;
      r.last_step_age_ms = no_step_ms;
      (rank < 2 ? a : b).push_back(r);
    }
    report("node-a", a);
    report("node-b", b);
  };
  for (int i = 0; i < 8; ++i, step += 10, tokens += 1000) {
    both(step, tokens, 0);
    clock_.advance(Millis(1'000));
  }
  EXPECT_TRUE(verdict().findings.empty()) << verdict().cause;
  // A stall is judged at the soft-hang time (6 s here): nothing before, then the drop.
  for (int i = 0; i < 6; ++i) {
    both(step, tokens, 1'000 * i);
    clock_.advance(Millis(1'000));
    EXPECT_EQ(find(verdict(), FindingCode::kThroughputDrop), nullptr) << i << ": " << verdict().cause;
  }
  both(step, tokens, 6'000);
  clock_.advance(Millis(1'000));
  JobVerdict v = verdict();
  EXPECT_FALSE(v.down);
  ASSERT_FALSE(v.findings.empty());
  EXPECT_EQ(v.findings[0].code, FindingCode::kThroughputDrop);
  EXPECT_EQ(v.cause.rfind("throughput 0 tokens/s is below 0.5x the job's recent median (4e+03)", 0), 0u)
      << v.cause;
}

// Steps of 0.25 to 0.75 s (±50 %) in report windows of a second: a window holds one step
// or three. Five minutes of it never make a drop; a job-wide slowdown to a third does,
// saying no rank is slower than the others.
TEST_F(JobAnalysis, AJitteryJobIsNoDropButAJobWideSlowdownIs) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> gap(0.25, 0.75);
  int64_t step = 0;
  double next_step_s = 0, t_s = 0;
  auto run_for = [&](double seconds, double slowdown, const std::function<void()>& each_second) {
    for (double end = t_s + seconds; t_s < end; t_s += 1.0) {
      int64_t last_step_ms = 0;
      while (next_step_s <= t_s + 1.0) {
        ++step;
        last_step_ms = static_cast<int64_t>(1000 * (t_s + 1.0 - next_step_s));
        next_step_s += slowdown * gap(rng);
      }
      clock_.advance(Millis(1'000));
      std::vector<RankReport> a, b;
      for (int rank = 0; rank < 4; ++rank) {
        RankReport r = training(rank, step);
        r.samples = static_cast<uint64_t>(16 * step);
        r.last_step_age_ms = last_step_ms;
        r.max_step_gap_ms = static_cast<int64_t>(750 * slowdown);
        (rank < 2 ? a : b).push_back(r);
      }
      report("node-a", a);
      report("node-b", b);
      each_second();
    }
  };
  spec_.thresholds.step_timeout_min = Millis(60'000);
  run_for(300, 1.0, [&] {
    EXPECT_EQ(find(verdict(), FindingCode::kThroughputDrop), nullptr) << t_s << " s: " << verdict().cause;
  });
  run_for(20, 3.0, [] {});
  const JobVerdict v = verdict();
  const Finding* drop = find(v, FindingCode::kThroughputDrop);
  ASSERT_NE(drop, nullptr) << v.cause;
  EXPECT_NE(drop->message.find(" samples/s is below 0.5x the job's recent median ("), std::string::npos)
      << drop->message;
  EXPECT_NE(drop->message.find("), job-wide: no rank is slower at its steps than the others"),
            std::string::npos)
      << drop->message;
}

// The job trains steadily, then every rank stops while alive and reporting. The warning
// lasts as long as the stall: windows of no progress never become the baseline the drop
// is measured against, not even once the stall outlasts the throughput history kept.
TEST_F(JobAnalysis, AThroughputDropLastsAsLongAsTheStall) {
  int64_t step = 0;
  uint64_t tokens = 0;
  auto both = [&](int64_t no_step_ms) {
    std::vector<RankReport> a, b;
    for (int rank = 0; rank < 4; ++rank) {
      RankReport r = training(rank, step);
      r.tokens = tokens;
      r.last_step_age_ms = no_step_ms;
      (rank < 2 ? a : b).push_back(r);
    }
    report("node-a", a);
    report("node-b", b);
  };
  for (int i = 0; i < 8; ++i, step += 10, tokens += 1000) {
    both(0);
    clock_.advance(Millis(1'000));
  }
  EXPECT_TRUE(verdict().findings.empty()) << verdict().cause;
  const int stalled_reports = static_cast<int>(kThroughputHistory) + 30;
  for (int i = 0; i < stalled_reports; ++i) {
    both(1'000 * i);
    // A stall is a drop once it outlasts the soft-hang time (6 s), unexplained.
    if (i >= 7) {
      JobVerdict v = verdict();
      const Finding* drop = find(v, FindingCode::kThroughputDrop);
      ASSERT_NE(drop, nullptr) << "after " << i << " s of the stall: " << v.cause;
      EXPECT_EQ(drop->severity, Severity::kWarning);
      EXPECT_EQ(drop->message, "throughput 0 tokens/s is below 0.5x the job's recent median (4e+03)");
    }
    clock_.advance(Millis(1'000));
  }
  // The stall itself pages; the drop stays beside it among the findings.
  JobVerdict v = verdict();
  ASSERT_TRUE(v.down);
  EXPECT_EQ(v.findings.front().code, FindingCode::kJobStalled);
  EXPECT_NE(find(v, FindingCode::kThroughputDrop), nullptr);
}

// Both nodes train on while rank 0's loss is NaN. Between reports the news of one node is
// up to 5 s old, yet its ranks stepped a moment before their report: nobody is waiting, and
// the alert must not say so at any instant.
TEST_F(JobAnalysis, ANanAlertNamesNoWaitingRanksWhileTheOthersTrainBetweenTheirReports) {
  pace();
  run_paced(Millis(30'000));
  EXPECT_TRUE(verdict().findings.empty()) << verdict().cause;
  // An older agent: no count, no first step; the server names the step of the first report
  // that showed the NaN, and keeps naming it.
  int64_t first_nan_step = -1, nan_step = -1;
  std::string when;
  rank_at_ = [&](int rank) {
    RankReport r = stepping(rank);
    if (rank == 0) {
      r.loss = std::numeric_limits<double>::quiet_NaN();
      nan_step = r.step;
      if (first_nan_step < 0) {
        first_nan_step = r.step;
        when = clock_time(clock_.system_time());
      }
    }
    return r;
  };
  int instants = 0;
  run_paced(Millis(12'000), [&] {
    if (nan_step < 0) return;
    JobVerdict v = verdict();
    ASSERT_TRUE(v.down) << paced_ms_;
    EXPECT_EQ(v.cause, "rank 0 (node-a, pid 100) has reported non-finite losses since step " +
                           std::to_string(first_nan_step) + " (" + when + "): NaN at step " +
                           std::to_string(nan_step))
        << "at " << paced_ms_ << " ms";
    ++instants;
  });
  EXPECT_EQ(instants, 71);  // every 100 ms from node-a's report at 35 s to 42 s
}

// Rank 1 is stopped (SIGSTOP); every other rank hangs in the next collective, and after
// 30 s both nodes' fresh reports say each has made no step since.
TEST_F(JobAnalysis, RanksWhoseOwnNodesReportShowsNoStepFor30sAreWaiting) {
  pace();
  run_paced(Millis(30'000));
  const std::string since = clock_time(clock_.system_time());
  const int64_t stopped_ms = paced_ms_;
  rank_at_ = [&](int rank) {
    RankReport r = stuck_since(rank, stopped_ms);
    if (rank == 1) r.state = 'T';
    return r;
  };
  run_paced(Millis(32'500));  // node-a reported 30 s in, node-b just now, 32.5 s in
  JobVerdict v = verdict();
  ASSERT_TRUE(v.down);
  EXPECT_EQ(v.cause,
            "rank 1 (node-a, pid 101) is stopped (process state T) at step 300; ranks 0,2-3 waiting since " +
                since + " (32s)");
}

// As above, but rank 2 is writing a checkpoint: it makes no step because it is busy, not
// because it waits for rank 1.
TEST_F(JobAnalysis, ARankWritingACheckpointIsNotWaiting) {
  pace();
  run_paced(Millis(30'000));
  const std::string since = clock_time(clock_.system_time());
  const int64_t stopped_ms = paced_ms_;
  rank_at_ = [&](int rank) {
    RankReport r = stuck_since(rank, stopped_ms);
    if (rank == 1) r.state = 'T';
    if (rank == 2) {
      r.status = RankStatus::kCheckpointing;
      r.checkpoint.state = CheckpointState::kInProgress;
      r.checkpoint.step = r.step;
      r.checkpoint.begin_age_ms = r.last_step_age_ms;
    }
    return r;
  };
  run_paced(Millis(32'500));
  JobVerdict v = verdict();
  ASSERT_TRUE(v.down);
  EXPECT_EQ(v.cause,
            "rank 1 (node-a, pid 101) is stopped (process state T) at step 300; ranks 0,3 waiting since " +
                since + " (32s)");
}

// node-a's agent is killed: its reports stop without a goodbye, but its ranks train on.
// node-b's ranks keep stepping, which in a synchronous job they could not do without
// node-a's: monitoring is lost, the job is not down. The grid does not call them down either.
TEST_F(JobAnalysis, LosingOnlyAnAgentIsAWarningWhileTheOtherNodesRanksAdvance) {
  pace();
  run_paced(Millis(30'000));  // node-a's last report: step 300
  agents_lost_.insert("node-a");
  // 62 s in: node-b last reported 57.5 s in, at step 575.
  run_paced(Millis(32'000), [&] { EXPECT_FALSE(verdict().down) << paced_ms_ << ": " << verdict().cause; });
  JobVerdict v = verdict();
  ASSERT_EQ(v.findings.size(), 1u) << v.cause;
  const Finding& lost = v.findings.front();
  EXPECT_EQ(lost.code, FindingCode::kMonitoringLost);
  EXPECT_EQ(lost.severity, Severity::kWarning);
  EXPECT_EQ(lost.ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(lost.node, "node-a");
  EXPECT_EQ(v.cause,
            "monitoring lost for node node-a: no report for 32s, but ranks 2-3 on other nodes have advanced "
            "from step 300 to step 575 since, so its ranks 0-1 are still training");
  const RankSummary grid = summarise_ranks(v, job_.ranks());
  EXPECT_EQ(grid.counts.count(RankHealth::kDown), 0u);
  EXPECT_EQ(grid.counts.at(RankHealth::kWarning), 2u);
}

// The agent is lost first; later node-b's ranks stop stepping too. Once node-b's own
// report shows no step for longer than a report interval, nothing vouches for node-a's
// ranks any more: node_silent, down, as when the node dies.
TEST_F(JobAnalysis, MonitoringLostBecomesNodeSilentWhenThePeersStopAdvancing) {
  pace();
  run_paced(Millis(30'000));
  const std::string last_seen = clock_time(clock_.system_time());
  agents_lost_.insert("node-a");
  run_paced(Millis(20'000));  // 50 s in: silent for 20 s, node-b at step 475
  JobVerdict lost = verdict();
  EXPECT_FALSE(lost.down) << lost.cause;
  ASSERT_NE(find(lost, FindingCode::kMonitoringLost), nullptr) << lost.cause;
  const int64_t stopped_ms = paced_ms_;
  const std::string stopped = clock_time(clock_.system_time());
  rank_at_ = [&](int rank) { return stuck_since(rank, stopped_ms); };
  // node-b's report 2.5 s later shows no step for 2.5 s: within an interval, still stepping.
  run_paced(Millis(7'400), [&] { EXPECT_FALSE(verdict().down) << paced_ms_ << ": " << verdict().cause; });
  run_paced(Millis(100));  // 57.5 s: node-b's report shows no step for 7.5 s
  JobVerdict v = verdict();
  ASSERT_TRUE(v.down);
  EXPECT_EQ(v.findings.front().code, FindingCode::kNodeSilent);
  EXPECT_EQ(v.findings.front().ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(find(v, FindingCode::kMonitoringLost), nullptr);
  EXPECT_EQ(v.cause,
            "node node-a has sent no report for 27s (3 reports missed; ranks 0-1 last seen there at " +
                last_seen + "); ranks 2-3 waiting since " + stopped + " (7s)");
}

// Nobody else reports: nothing shows the silent node's ranks training.
TEST_F(JobAnalysis, ASingleNodeJobWhoseNodeGoesSilentIsDown) {
  spec_.world_size = 2;
  for (int64_t step = 0; step <= 100; step += 10) {
    report("node-a", {training(0, step), training(1, step)});
    clock_.advance(Millis(1'000));
  }
  clock_.advance(Millis(2'100));
  JobVerdict v = verdict();
  ASSERT_TRUE(v.down);
  EXPECT_EQ(v.findings.front().code, FindingCode::kNodeSilent);
  EXPECT_EQ(v.cause.rfind("node node-a has sent no report for 3s", 0), 0u) << v.cause;
}

TEST_F(JobAnalysis, NodesThatGoSilentTogetherAreDown) {
  run_healthy();
  clock_.advance(Millis(3'100));
  JobVerdict v = verdict();
  ASSERT_TRUE(v.down);
  ASSERT_EQ(v.findings.size(), 2u) << v.cause;
  EXPECT_EQ(v.findings[0].code, FindingCode::kNodeSilent);
  EXPECT_EQ(v.findings[1].code, FindingCode::kNodeSilent);
}

}  // namespace
}  // namespace trainwatch::jobs

namespace trainwatch::jobs {
namespace {

// torchrun --max_restarts: the launcher starts every worker again with a higher restart
// count, new pids, from the last checkpoint.
RankReport relaunched(int rank, int attempt, RankStatus status, int64_t step = -1, uint64_t reports = 0) {
  RankReport r = training(rank, step, reports);
  r.pid = 1000 * (attempt + 1) + rank;
  r.attempt = attempt;
  r.world_size = 4;
  r.status = status;
  r.step_reports = reports;
  return r;
}

class JobAttempts : public JobAnalysis {
 protected:
  // Attempt 0 trains to step 100, then rank 2 is SIGKILLed and its peers fail after it.
  void first_attempt_fails() {
    for (int i = 0; i <= 10; ++i) {
      report("node-a", {relaunched(0, 0, RankStatus::kTraining, 10 * i, 10 * i + 1),
                        relaunched(1, 0, RankStatus::kTraining, 10 * i, 10 * i + 1)});
      report("node-b", {relaunched(2, 0, RankStatus::kTraining, 10 * i, 10 * i + 1),
                        relaunched(3, 0, RankStatus::kTraining, 10 * i, 10 * i + 1)});
      clock_.advance(Millis(1'000));
    }
    RankReport victim = relaunched(2, 0, RankStatus::kTraining, 100, 101);
    victim.alive = false;
    victim.gone_age_ms = 0;
    victim.exit = ProcessExit{-1, 9, false, false};
    report("node-b", {victim, relaunched(3, 0, RankStatus::kTraining, 100, 101)});
  }
  void second_attempt_reports(RankStatus status, int64_t step = -1, uint64_t reports = 0) {
    report("node-a", {relaunched(0, 1, status, step, reports), relaunched(1, 1, status, step, reports)});
    report("node-b", {relaunched(2, 1, status, step, reports), relaunched(3, 1, status, step, reports)});
  }
};

TEST_F(JobAttempts, ARestartIsANewAttemptThatKeepsTheJobDownUntilItSteps) {
  first_attempt_fails();
  JobVerdict failed = verdict();
  ASSERT_TRUE(failed.down);
  EXPECT_EQ(failed.findings.front().code, FindingCode::kRankGone);

  clock_.advance(Millis(3'000));
  second_attempt_reports(RankStatus::kInitializing);
  JobVerdict restarting = verdict();
  ASSERT_TRUE(restarting.down) << restarting.cause;
  EXPECT_EQ(restarting.findings.front().code, FindingCode::kRestarting);
  EXPECT_EQ(restarting.cause.rfind("attempt 2 (launcher restart 1) is starting: no step yet in ", 0), 0u)
      << restarting.cause;
  EXPECT_NE(restarting.cause.find("attempt 1 got to step 100"), std::string::npos) << restarting.cause;
  ASSERT_EQ(job_.attempts().size(), 2u);
  for (const auto& [rank, r] : job_.ranks()) EXPECT_EQ(r.last.attempt, 1) << "rank " << rank << " is history";

  // A late report from the first attempt's agent changes nothing.
  RankReport ghost = relaunched(2, 0, RankStatus::kTraining, 100, 101);
  ghost.alive = false;
  report("node-b", {ghost});
  EXPECT_EQ(job_.ranks().at(2).last.attempt, 1);

  clock_.advance(Millis(2'000));
  second_attempt_reports(RankStatus::kTraining, 90, 1);  // resumed from the checkpoint at 90
  JobVerdict trains = verdict();
  EXPECT_FALSE(trains.down) << trains.cause;
  EXPECT_EQ(job_.attempts().back().first_step, 90);
}

TEST_F(JobAttempts, ALaterAttemptStuckInStartUpIsDownAfterThreeTimesTheStartUpItHadBefore) {
  spec_.thresholds.startup_timeout = Millis(30 * 60'000);
  first_attempt_fails();  // attempt 1 was warm within 4 s of its first report
  clock_.advance(Millis(1'000));
  second_attempt_reports(RankStatus::kTraining, 90, 1);
  for (int i = 0; i < 59; ++i) {
    clock_.advance(Millis(1'000));
    second_attempt_reports(RankStatus::kTraining, 90, 1);  // one step, then nothing
  }
  EXPECT_FALSE(verdict().down) << "within the floor of " << kLearnedStartupFloor.count() << " ms";
  clock_.advance(Millis(2'000));
  second_attempt_reports(RankStatus::kTraining, 90, 1);
  JobVerdict v = verdict();
  ASSERT_TRUE(v.down);
  EXPECT_EQ(v.findings.front().code, FindingCode::kStartupStuck) << v.cause;
  EXPECT_EQ(v.timeouts.startup, kLearnedStartupFloor);
}

TEST_F(JobAttempts, AChangeOfWorldSizeIsANewAttemptWithTheNewSize) {
  first_attempt_fails();
  clock_.advance(Millis(1'000));
  RankReport a = relaunched(0, 0, RankStatus::kTraining, 90, 1);
  RankReport b = relaunched(1, 0, RankStatus::kTraining, 90, 1);
  a.world_size = b.world_size = 2;
  a.pid = 7000;
  b.pid = 7001;
  report("node-a", {a, b});
  ASSERT_EQ(job_.attempts().size(), 2u);
  EXPECT_EQ(job_.attempts().back().world_size, 2);
  EXPECT_EQ(job_.ranks().size(), 2u);
  spec_.world_size = 2;
  const JobVerdict v = verdict();
  EXPECT_FALSE(v.down) << "the first attempt's dead rank is history: " << v.cause;
}

// The ledger fed every second's verdict, as JobRegistry feeds it.
class JobLedger : public JobAttempts {
 protected:
  void tick() { ledger_.observe(job_, verdict(), clock_.monotonic_time(), clock_.system_time()); }
  InterruptionLedger ledger_;
};

TEST_F(JobLedger, ASigkillAndATorchrunRestartIsOneInterruptionWithWhatItCost) {
  first_attempt_fails();
  clock_.advance(Millis(500));  // the verdict comes at the next tick
  tick();
  ASSERT_TRUE(ledger_.open());
  clock_.advance(Millis(3'000));
  second_attempt_reports(RankStatus::kInitializing);
  tick();
  clock_.advance(Millis(6'000));
  tick();
  second_attempt_reports(RankStatus::kTraining, 90, 1);
  tick();
  ASSERT_EQ(ledger_.entries().size(), 1u);
  const Interruption& i = ledger_.entries().front();
  EXPECT_FALSE(ledger_.open());
  EXPECT_EQ(i.cause.kind, InterruptionKind::kSignal);
  EXPECT_EQ(i.cause.detail, "SIGKILL");
  EXPECT_EQ(i.attempt, 1);
  EXPECT_TRUE(i.restarted);
  EXPECT_EQ(i.step, 100);
  EXPECT_EQ(i.steps_lost(), 11) << "steps 90 to 100 are made again";
  EXPECT_EQ(i.to_detect(), Millis(500));
  EXPECT_EQ(i.to_resume(clock_.monotonic_time()), Millis(9'000));
  // No checkpoint: everything since the attempt began (11 s) is redone, on 4 GPUs.
  EXPECT_EQ(i.recomputed(job_.attempts().front().started), Millis(11'000));
  EXPECT_NEAR(i.gpu_hours_lost(clock_.monotonic_time(), job_.attempts().front().started),
              4 * (0.5 + 9 + 11) / 3600.0, 1e-9);
  EXPECT_EQ(ledger_.totals().at(InterruptionKind::kSignal).count, 1u);
  const Goodput g = ledger_.goodput(job_, clock_.monotonic_time());
  EXPECT_EQ(g.wall, Millis(20'500));
  EXPECT_NEAR(g.ratio, 1.0 - 20.5 / 20.5, 1e-9) << "every second so far was lost or redone";
}

// The job's start-up (imports, data, the rendezvous) is no training lost: goodput counts
// from its first step.
TEST_F(JobLedger, GoodputCountsFromTheJobsFirstStep) {
  for (int i = 0; i < 20; ++i) {  // 20 s of start-up: every rank initializing
    report("node-a",
           {relaunched(0, 0, RankStatus::kInitializing), relaunched(1, 0, RankStatus::kInitializing)});
    report("node-b",
           {relaunched(2, 0, RankStatus::kInitializing), relaunched(3, 0, RankStatus::kInitializing)});
    clock_.advance(Millis(1'000));
    tick();
  }
  for (int i = 0; i <= 10; ++i) {
    report("node-a", {relaunched(0, 0, RankStatus::kTraining, 10 * i, 10 * i + 1),
                      relaunched(1, 0, RankStatus::kTraining, 10 * i, 10 * i + 1)});
    report("node-b", {relaunched(2, 0, RankStatus::kTraining, 10 * i, 10 * i + 1),
                      relaunched(3, 0, RankStatus::kTraining, 10 * i, 10 * i + 1)});
    if (i < 10) clock_.advance(Millis(1'000));
    tick();
  }
  const Goodput g = ledger_.goodput(job_, clock_.monotonic_time());
  EXPECT_EQ(g.wall, Millis(10'000));
  EXPECT_EQ(g.ratio, 1.0);
}

// Rank 0's checkpoint write fails (a full disk), the script catches the error, and every
// rank trains on: the failed checkpoint pages, but the job never stopped, so it costs
// nothing until a restart redoes the steps since the last good checkpoint.
TEST_F(JobLedger, ACaughtCheckpointFailureIsNoInterruptionWhileTheJobTrainsOn) {
  int64_t step = 0;
  auto all = [&](CheckpointState ck) {
    RankReport r0 = relaunched(0, 0, RankStatus::kTraining, step, static_cast<uint64_t>(step + 1));
    if (ck != CheckpointState::kNone) {
      r0.checkpoint.state = ck;
      r0.checkpoint.step = 50;
      r0.error = "OSError: [Errno 28] No space left on device";
      r0.error_age_ms = 0;
    }
    report("node-a", {r0, relaunched(1, 0, RankStatus::kTraining, step, static_cast<uint64_t>(step + 1))});
    report("node-b", {relaunched(2, 0, RankStatus::kTraining, step, static_cast<uint64_t>(step + 1)),
                      relaunched(3, 0, RankStatus::kTraining, step, static_cast<uint64_t>(step + 1))});
  };
  for (int i = 0; i < 10; ++i, step += 10) {
    all(CheckpointState::kNone);
    clock_.advance(Millis(1'000));
    tick();
  }
  for (int i = 0; i < 60; ++i, step += 10) {
    all(CheckpointState::kFailed);
    clock_.advance(Millis(1'000));
    tick();
    ASSERT_TRUE(verdict().down) << "a failed checkpoint pages";
    EXPECT_EQ(verdict().findings.front().code, FindingCode::kCheckpointFailed);
  }
  EXPECT_TRUE(ledger_.entries().empty()) << ledger_.entries().front().message;
  const Goodput g = ledger_.goodput(job_, clock_.monotonic_time());
  EXPECT_EQ(g.ratio, 1.0) << "the job trained all along";
}

// A server restarted a minute later reads the memo back: the attempts, the interruption
// and what it cost are what they were, and the next report of attempt 2 begins nothing new.
TEST_F(JobLedger, AMemoCarriesAttemptsAndTheLedgerAcrossARestart) {
  first_attempt_fails();
  clock_.advance(Millis(500));
  tick();
  clock_.advance(Millis(3'000));
  second_attempt_reports(RankStatus::kInitializing);
  tick();
  clock_.advance(Millis(6'000));
  second_attempt_reports(RankStatus::kTraining, 90, 1);
  tick();
  const std::string memo = encode_job_memo(job_, ledger_, clock_.monotonic_time(), clock_.system_time());
  const Goodput before = ledger_.goodput(job_, clock_.monotonic_time());

  clock_.advance(Millis(60'000));
  JobState resumed("j");
  InterruptionLedger ledger;
  ASSERT_TRUE(apply_job_memo(memo, resumed, ledger, clock_.monotonic_time(), clock_.system_time()).ok());
  ASSERT_EQ(resumed.attempts().size(), 2u);
  EXPECT_EQ(resumed.attempts().back().number, 2);
  EXPECT_EQ(resumed.attempts().back().launcher_attempt, 1);
  EXPECT_EQ(resumed.attempts().back().first_step, 90);
  ASSERT_EQ(ledger.entries().size(), 1u);
  const Interruption& i = ledger.entries().front();
  EXPECT_EQ(i.cause.kind, InterruptionKind::kSignal);
  EXPECT_EQ(i.cause.detail, "SIGKILL");
  EXPECT_TRUE(i.restarted);
  EXPECT_EQ(i.steps_lost(), 11);
  EXPECT_EQ(i.to_detect(), Millis(500));
  EXPECT_EQ(ledger.totals().at(InterruptionKind::kSignal).count, 1u);
  EXPECT_NEAR(ledger.totals().at(InterruptionKind::kSignal).gpu_hours_lost,
              ledger_.totals().at(InterruptionKind::kSignal).gpu_hours_lost, 1e-9);
  const Goodput after = ledger.goodput(resumed, clock_.monotonic_time());
  EXPECT_EQ(after.wall, before.wall + Millis(60'000)) << "the job's age counts from its first step";
  EXPECT_EQ(after.restarting, before.restarting);

  NodeReport n;
  n.node = "node-a";
  n.ranks = {relaunched(0, 1, RankStatus::kTraining, 700, 610),
             relaunched(1, 1, RankStatus::kTraining, 700, 610)};
  ASSERT_TRUE(resumed.ingest(n, clock_.monotonic_time(), clock_.system_time()));
  EXPECT_EQ(resumed.attempts().size(), 2u) << "attempt 2 goes on";
}

// torchrun restarts the ranks, and they step, before the next verdict: none showed the
// failure, yet attempt 1 ended failed and the time since the SIGKILL is lost.
TEST_F(JobLedger, ASigkillAndARestartThatStepsWithinTheSecondIsStillAnInterruption) {
  first_attempt_fails();
  const MonoTime killed = clock_.monotonic_time();
  clock_.advance(Millis(400));
  second_attempt_reports(RankStatus::kTraining, 90, 1);
  clock_.advance(Millis(600));
  tick();
  ASSERT_EQ(ledger_.entries().size(), 1u);
  EXPECT_FALSE(ledger_.open()) << "attempt 2 trains";
  const Interruption& i = ledger_.entries().front();
  EXPECT_EQ(i.attempt, 1);
  EXPECT_EQ(i.code, FindingCode::kRankGone);
  EXPECT_EQ(i.cause.kind, InterruptionKind::kSignal);
  EXPECT_EQ(i.cause.detail, "SIGKILL");
  EXPECT_EQ(i.message, "rank 2 was killed by SIGKILL; attempt 2 began before trainwatch saw it");
  EXPECT_EQ(i.failed_at, killed);
  EXPECT_EQ(i.failed_wall, clock_.system_time() - std::chrono::seconds(1));
  EXPECT_TRUE(i.restarted);
  EXPECT_EQ(i.step, 100);
  EXPECT_EQ(i.steps_lost(), 11) << "steps 90 to 100 are made again";
  EXPECT_EQ(i.world_size, 4);
  EXPECT_EQ(i.to_detect() + i.to_resume(clock_.monotonic_time()), Millis(1'000));
  EXPECT_EQ(ledger_.totals().at(InterruptionKind::kSignal).count, 1u);
  EXPECT_EQ(ledger_.count(), 1u);
  const Goodput g = ledger_.goodput(job_, clock_.monotonic_time());
  EXPECT_EQ(g.detecting + g.restarting, Millis(1'000));
  EXPECT_EQ(g.recomputing, Millis(11'000)) << "no checkpoint: attempt 1's 11 s are redone";

  clock_.advance(Millis(1'000));
  second_attempt_reports(RankStatus::kTraining, 100, 2);
  tick();
  EXPECT_EQ(ledger_.entries().size(), 1u) << "attempt 1 ended once";
}

// The first verdict after the restart is the restart's own ("restarting", attempt 2 has
// not stepped): the interruption is attempt 1's, named by its SIGKILL, not "restarted".
TEST_F(JobLedger, ARestartSeenBeforeTheFailureIsNamedByTheFailure) {
  first_attempt_fails();
  const MonoTime killed = clock_.monotonic_time();
  clock_.advance(Millis(300));
  second_attempt_reports(RankStatus::kInitializing);
  clock_.advance(Millis(700));
  const JobVerdict restarting = verdict();
  ASSERT_TRUE(restarting.down);
  ASSERT_EQ(restarting.findings.front().code, FindingCode::kRestarting);
  tick();
  ASSERT_TRUE(ledger_.open());
  ASSERT_EQ(ledger_.entries().size(), 1u);
  EXPECT_EQ(ledger_.entries().front().cause.kind, InterruptionKind::kSignal);
  EXPECT_EQ(ledger_.entries().front().attempt, 1);

  clock_.advance(Millis(5'000));
  tick();
  second_attempt_reports(RankStatus::kTraining, 90, 1);
  tick();
  ASSERT_EQ(ledger_.entries().size(), 1u);
  EXPECT_FALSE(ledger_.open());
  const Interruption& i = ledger_.entries().front();
  EXPECT_EQ(i.failed_at, killed);
  EXPECT_EQ(i.to_detect(), Millis(1'000));
  EXPECT_EQ(i.to_resume(clock_.monotonic_time()), Millis(5'000));
  EXPECT_TRUE(i.restarted);
  EXPECT_EQ(ledger_.totals().count(InterruptionKind::kRestarted), 0u);
}

TEST(JobMemo, AnUnreadableMemoChangesNothing) {
  JobState job("j");
  InterruptionLedger ledger;
  EXPECT_FALSE(apply_job_memo("not json", job, ledger, MonoTime{}, SystemTime{}).ok());
  const Status newer = apply_job_memo(R"({"version":99})", job, ledger, MonoTime{}, SystemTime{});
  ASSERT_FALSE(newer.ok());
  EXPECT_EQ(newer.error().message, "memo version 99; this server reads 1");
  EXPECT_TRUE(job.attempts().empty());
}

TEST_F(JobLedger, AStallThatEndsInPlaceLosesNoStepsOnlyTime) {
  spec_.thresholds.step_timeout_min = Millis(2'000);
  const int64_t step = run_healthy();
  tick();
  clock_.advance(Millis(5'000));
  auto stuck = [&](int rank) {
    RankReport r = training(rank, step);
    r.last_step_age_ms = 5'000;
    return r;
  };
  report("node-a", {stuck(0), stuck(1)});
  report("node-b", {stuck(2), stuck(3)});
  tick();
  ASSERT_TRUE(ledger_.open());
  EXPECT_EQ(ledger_.entries().back().code, FindingCode::kJobStalled);
  clock_.advance(Millis(1'000));
  healthy(step + 10);
  clock_.advance(Millis(1'000));
  healthy(step + 20);
  tick();
  ASSERT_FALSE(ledger_.open());
  const Interruption& i = ledger_.entries().back();
  EXPECT_FALSE(i.restarted);
  EXPECT_EQ(i.steps_lost(), 0);
  EXPECT_EQ(i.recomputed(MonoTime{}), Millis(0));
  // It failed at its last step, not when the 2 s step timeout was crossed: all 5 s from
  // there to the verdict are lost time, and then the 2 s to training again.
  EXPECT_EQ(i.to_detect(), Millis(5'000));
  EXPECT_EQ(i.to_resume(clock_.monotonic_time()), Millis(2'000));
}

TEST(Interruptions, AreClassifiedFromWhatTheHeadFindingAndItsRankSay) {
  JobState job("j");
  NodeReport n;
  n.node = "a";
  auto with = [&](const std::function<void(RankReport&)>& change) {
    RankReport r = training(0, 5);
    change(r);
    n.ranks = {r};
    job.ingest(n, MonoTime{}, SystemTime{});
  };
  auto kind_of = [&](FindingCode code) {
    return classify(Finding{code, Severity::kDown, {0}, "a", "", 0, MonoTime{}}, job);
  };
  with([](RankReport& r) { r.alive = false, r.exit = ProcessExit{-1, 15, false, false}; });
  EXPECT_EQ(kind_of(FindingCode::kRankGone).kind, InterruptionKind::kPreempted);
  with([](RankReport& r) { r.alive = false, r.exit = ProcessExit{-1, 9, false, true}; });
  EXPECT_EQ(kind_of(FindingCode::kRankGone).kind, InterruptionKind::kHostOom);
  with([](RankReport& r) { r.alive = false, r.exit = ProcessExit{2, 0, false, false}; });
  EXPECT_EQ(kind_of(FindingCode::kRankGone).detail, "exit code 2");
  with([](RankReport& r) { r.alive = false, r.exit.reset(); });
  EXPECT_EQ(kind_of(FindingCode::kRankGone).kind, InterruptionKind::kVanished);
  with([](RankReport& r) {
    r.status = RankStatus::kFailed;
    r.error = "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\nmore";
  });
  EXPECT_EQ(kind_of(FindingCode::kRankFailed).kind, InterruptionKind::kGpuOom);
  EXPECT_EQ(kind_of(FindingCode::kRankFailed).detail.find('\n'), std::string::npos);
  with([](RankReport& r) { r.status = RankStatus::kFailed, r.error = "ValueError: bad shard"; });
  EXPECT_EQ(kind_of(FindingCode::kRankFailed).kind, InterruptionKind::kException);
  with([](RankReport& r) { r.error = "OSError: [Errno 28] No space left on device"; });
  EXPECT_EQ(kind_of(FindingCode::kCheckpointFailed).kind, InterruptionKind::kDiskFull);
  with([](RankReport& r) { r.error = "PermissionError: denied"; });
  EXPECT_EQ(kind_of(FindingCode::kCheckpointFailed).kind, InterruptionKind::kCheckpointFailed);
  EXPECT_EQ(kind_of(FindingCode::kNodeSilent).kind, InterruptionKind::kNodeLost);
  EXPECT_EQ(kind_of(FindingCode::kGpuXid).kind, InterruptionKind::kGpuFault);
  EXPECT_EQ(kind_of(FindingCode::kLossNotFinite).kind, InterruptionKind::kNumbers);
  EXPECT_EQ(kind_of(FindingCode::kRankStuck).kind, InterruptionKind::kHangElsewhere);
}

}  // namespace
}  // namespace trainwatch::jobs
