// A job paused at a barrier (barrier_wait.h): rank 0 working alone while its peers wait for
// it in dist.barrier(), told by collective marks before any stack comes; and the analysis
// that neither suspects rank 0 nor calls the pause a drop, nor the ranks the barrier lets go
// before their first step, yet still pages one that never ends and still names a rank the
// others wait for in all_reduce.
#include "jobs/barrier_wait.h"

#include <gtest/gtest.h>

#include "fakes/manual_clock.h"
#include "jobs/analysis.h"
#include "jobs/job_state.h"

namespace trainwatch::jobs {
namespace {

using testing::ManualClock;

// A rank whose marks say it has entered `count` collectives, the last of `kind`, and whether
// it is in it now; its system call as the agent reads it without a stack.
RankReport marked(int rank, uint64_t count, const std::string& kind, bool inside, std::string syscall) {
  RankReport r;
  r.rank = rank;
  r.pid = 100 + rank;
  r.state = 'S';
  r.status = RankStatus::kTraining;
  r.syscall = std::move(syscall);
  r.collective = CollectiveReport{count, kind, inside, 0, 0};
  return r;
}

// Rank 0 outside the collectives (count 195, its last all_reduce done), ranks 1-3 in the
// barrier it has yet to enter (count 196): the reports of an undeclared evaluation on rank 0.
std::vector<RankReport> rank_zero_evaluating() {
  return {marked(0, 195, "all_reduce", false, "clock_nanosleep"), marked(1, 196, "barrier", true, "futex"),
          marked(2, 196, "barrier", true, "futex"), marked(3, 196, "barrier", true, "futex")};
}

bool paused(const std::vector<RankReport>& ranks) {
  std::vector<std::pair<int, const RankReport*>> in;
  in.reserve(ranks.size());
  for (const auto& r : ranks) in.emplace_back(r.rank, &r);
  return paused_at_barrier(in);
}

TEST(PausedAtBarrier, RankZeroOutsideWhileTheOthersWaitInTheBarrier) {
  EXPECT_TRUE(paused(rank_zero_evaluating()));
}

TEST(PausedAtBarrier, NotWhenTheOthersWaitInAnotherCollective) {
  auto ranks = rank_zero_evaluating();
  for (size_t i = 1; i < ranks.size(); ++i) ranks[i].collective->kind = "all_reduce";
  EXPECT_FALSE(paused(ranks)) << "they wait for rank 0's data: a rank stuck in its step";
}

TEST(PausedAtBarrier, NotWhenEveryRankOrNoRankIsInTheBarrier) {
  auto all_in = rank_zero_evaluating();
  all_in[0] = marked(0, 196, "barrier", true, "futex");
  EXPECT_FALSE(paused(all_in)) << "every rank in the barrier: nobody works for the others";
  auto none_in = rank_zero_evaluating();
  for (auto& r : none_in) r.collective->inside = false;
  EXPECT_FALSE(paused(none_in));
}

TEST(PausedAtBarrier, NotWhenARanksWhereaboutsAreUnknown) {
  auto ranks = rank_zero_evaluating();
  ranks[2].collective.reset();  // a rank whose collectives are not marked
  EXPECT_FALSE(paused(ranks));
}

TEST(PausedAtBarrier, NotWhenTheRankOutsideHasPassedTheBarrierOrTheWaitersAreInDifferentOnes) {
  auto passed = rank_zero_evaluating();
  passed[0].collective->count = 196;
  EXPECT_FALSE(paused(passed));
  auto apart = rank_zero_evaluating();
  apart[3].collective->count = 197;
  EXPECT_FALSE(paused(apart));
}

TEST(PausedAtBarrier, AStackOutranksTheMarks) {
  auto ranks = rank_zero_evaluating();
  PyThreadStack t;
  t.frames = {{"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", 1536, "all_reduce"},
              {"/work/train.py", 57, "<module>"}};
  ranks[1].stack = RankStack{PyStack{{t}, false}, "", 500, {}, "", {}};
  EXPECT_FALSE(paused(ranks)) << "its stack says all_reduce, whatever its marks say";
}

// Rank 0 evaluates alone, undeclared, for 40 s while ranks 1-3 wait in dist.barrier(), on a
// job that trained at 10 steps a second; no stack ever comes, only marks and system calls.
class BarrierPause : public ::testing::Test {
 protected:
  BarrierPause() : job_("llama") {
    spec_.world_size = 4;
    spec_.thresholds.step_timeout_min = Millis(60'000);
  }

  void report(std::vector<RankReport> ranks, int64_t step, int64_t stale_ms) {
    for (auto& r : ranks) {
      r.step = step;
      r.step_reports = static_cast<uint64_t>(step + 1);
      r.last_step_age_ms = stale_ms;
      r.samples = r.step_reports * 16;
    }
    NodeReport a, b;
    a.node = "node-a";
    b.node = "node-b";
    a.report_every = b.report_every = Millis(1'000);
    a.ranks = {ranks[0], ranks[1]};
    b.ranks = {ranks[2], ranks[3]};
    ASSERT_TRUE(job_.ingest(a, clock_.monotonic_time(), clock_.system_time()));
    ASSERT_TRUE(job_.ingest(b, clock_.monotonic_time(), clock_.system_time()));
  }

  // A minute of training, every rank in all_reduce now and then; returns the last step.
  int64_t train() {
    int64_t step = 0;
    for (int s = 0; s < 60; ++s, step += 10) {
      std::vector<RankReport> ranks;
      ranks.reserve(4);
      for (int rank = 0; rank < 4; ++rank)
        ranks.push_back(
            marked(rank, static_cast<uint64_t>(2 * step + 1), "all_reduce", s % 2 == 0, "running"));
      report(ranks, step, 0);
      clock_.advance(Millis(1'000));
    }
    return step - 10;
  }

  JobVerdict verdict() { return analyse(job_, spec_, clock_.monotonic_time(), clock_.system_time()); }

  ManualClock clock_;
  JobState job_;
  JobCheckSpec spec_;
};

TEST_F(BarrierPause, RankZeroWorkingWhileTheOthersWaitInABarrierIsNoSuspectNorADrop) {
  const int64_t step = train();
  for (int s = 1; s <= 40; ++s) {
    report(rank_zero_evaluating(), step, 1'000 * s);
    clock_.advance(Millis(1'000));
    JobVerdict v = verdict();
    EXPECT_FALSE(v.down) << s << " s: " << v.cause;
    EXPECT_TRUE(v.findings.empty()) << s << " s: " << v.cause;
  }
}

// The barrier lets the ranks go: ranks 0, 2 and 3 are out of it, asleep before their next
// step, while rank 1's agent still finds it in the barrier's futex. No step for 21 s, and
// rank 1 alone in another system call; yet the ranks coming out of the barrier show the job
// moving, so nobody is suspected, until nothing moves for the early-warning time again.
TEST_F(BarrierPause, RanksLetGoByTheBarrierBeforeTheirFirstStepAreNoSuspects) {
  const int64_t step = train();
  for (int s = 1; s <= 20; ++s) {
    report(rank_zero_evaluating(), step, 1'000 * s);
    clock_.advance(Millis(1'000));
  }
  std::vector<RankReport> let_go{marked(0, 196, "barrier", false, "clock_nanosleep"),
                                 marked(1, 196, "barrier", true, "futex"),
                                 marked(2, 196, "barrier", false, "clock_nanosleep"),
                                 marked(3, 196, "barrier", false, "clock_nanosleep")};
  for (int s = 21; s <= 28; ++s) {
    report(let_go, step, 1'000 * s);
    clock_.advance(Millis(1'000));
    JobVerdict v = verdict();
    if (s <= 26) {
      EXPECT_TRUE(v.findings.empty()) << s << " s: " << v.cause;
    }
  }
  JobVerdict v = verdict();
  EXPECT_FALSE(v.down) << v.cause;
  ASSERT_TRUE(v.notify) << "nothing moved for 8 s since: " << v.cause;
  EXPECT_EQ(v.cause.rfind("rank 1 (node-a, pid 101) is likely stuck in futex at step ", 0), 0u) << v.cause;
}

TEST_F(BarrierPause, APauseThatNeverEndsStillPagesAtTheStepTimeout) {
  const int64_t step = train();
  for (int s = 1; s <= 62; ++s) {
    report(rank_zero_evaluating(), step, 1'000 * s);
    clock_.advance(Millis(1'000));
  }
  JobVerdict v = verdict();
  ASSERT_TRUE(v.down) << v.cause;
  EXPECT_EQ(v.cause.rfind(
                "rank 0 (node-a, pid 100) is stuck in clock_nanosleep at step " + std::to_string(step), 0),
            0u)
      << v.cause;
}

TEST_F(BarrierPause, ARankTheOthersWaitForInAllReduceIsStillSuspected) {
  const int64_t step = train();
  std::vector<RankReport> ranks = rank_zero_evaluating();
  for (size_t i = 1; i < ranks.size(); ++i) ranks[i].collective->kind = "all_reduce";
  for (int s = 1; s <= 10; ++s) {
    report(ranks, step, 1'000 * s);
    clock_.advance(Millis(1'000));
  }
  JobVerdict v = verdict();
  EXPECT_FALSE(v.down) << v.cause;
  ASSERT_TRUE(v.notify) << v.cause;
  EXPECT_EQ(v.findings.front().code, FindingCode::kRankSuspected) << v.cause;
  EXPECT_EQ(v.cause.rfind("rank 0 (node-a, pid 100) is likely stuck in clock_nanosleep at step ", 0), 0u)
      << v.cause;
}

}  // namespace
}  // namespace trainwatch::jobs
