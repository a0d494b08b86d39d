// Where ranks are when a job stalls (rank_place.h), and the alert that names the one the
// others wait for: reports carrying stacks or system calls go in on a manual clock.
#include "jobs/rank_place.h"

#include <gtest/gtest.h>

#include "fakes/manual_clock.h"
#include "jobs/analysis.h"
#include "jobs/job_state.h"

namespace trainwatch::jobs {
namespace {

using testing::ManualClock;

constexpr const char* kTorch = "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py";

// The main thread of a rank waiting in all_reduce, called from train.py line 57.
PyStack in_all_reduce() {
  PyThreadStack t;
  t.frames = {{kTorch, 1536, "all_reduce"}, {"/work/train.py", 57, "<module>"}};
  return PyStack{{t}, false};
}

// The main thread of a rank asleep in its data loader.
PyStack in_data_loader() {
  PyThreadStack t;
  t.frames = {{"/work/data.py", 31, "fetch_next_shard"}, {"/work/train.py", 50, "<module>"}};
  return PyStack{{t}, false};
}

RankReport rank_with(int rank, std::optional<PyStack> stack, std::string syscall = "") {
  RankReport r;
  r.rank = rank;
  r.pid = 100 + rank;
  r.state = 'S';
  r.status = RankStatus::kTraining;
  r.syscall = std::move(syscall);
  if (stack) r.stack = RankStack{std::move(*stack), "", 0};
  return r;
}

Whereabouts of(const std::vector<RankReport>& ranks) {
  std::vector<std::pair<int, const RankReport*>> in;
  for (const auto& r : ranks) in.emplace_back(r.rank, &r);
  return whereabouts(in);
}

TEST(RankPlace, AStackNamesTheCallTheProgramMadeAndWhere) {
  auto waiting = place_of(rank_with(0, in_all_reduce()));
  ASSERT_TRUE(waiting);
  EXPECT_EQ(waiting->text, "in all_reduce (train.py:57)");
  EXPECT_EQ(waiting->kind, RankPlace::Kind::kCollective);
  auto stuck = place_of(rank_with(2, in_data_loader()));
  ASSERT_TRUE(stuck);
  EXPECT_EQ(stuck->text, "in fetch_next_shard (data.py:31)");
  EXPECT_EQ(stuck->kind, RankPlace::Kind::kElsewhere);
}

TEST(RankPlace, WithoutAStackTheSystemCallIsThePlace) {
  auto p = place_of(rank_with(1, std::nullopt, "clock_nanosleep"));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->text, "in clock_nanosleep");
  EXPECT_EQ(p->kind, RankPlace::Kind::kUnknown);
  EXPECT_FALSE(place_of(rank_with(1, std::nullopt, "running")));
  EXPECT_FALSE(place_of(rank_with(1, std::nullopt)));
}

TEST(RankPlace, TheRankOutsideTheCollectiveIsTheCulpritEvenWhenItHasCompany) {
  auto w = of({rank_with(0, in_all_reduce()), rank_with(1, in_data_loader()), rank_with(2, in_data_loader()),
               rank_with(3, in_all_reduce())});
  ASSERT_EQ(w.groups.size(), 2u);
  ASSERT_TRUE(w.culprit);
  EXPECT_EQ(w.groups[*w.culprit].ranks, (std::vector<int>{1, 2}));
}

TEST(RankPlace, WithSystemCallsOnlyAMinorityPlaceIsNamed) {
  auto one_of_four = of({rank_with(0, std::nullopt, "futex"), rank_with(1, std::nullopt, "futex"),
                         rank_with(2, std::nullopt, "clock_nanosleep"), rank_with(3, std::nullopt, "futex")});
  ASSERT_TRUE(one_of_four.culprit);
  EXPECT_EQ(one_of_four.groups[*one_of_four.culprit].ranks, std::vector<int>{2});
  auto two_of_four =
      of({rank_with(0, std::nullopt, "futex"), rank_with(1, std::nullopt, "futex"),
          rank_with(2, std::nullopt, "clock_nanosleep"), rank_with(3, std::nullopt, "clock_nanosleep")});
  EXPECT_FALSE(two_of_four.culprit);
  auto one_place = of({rank_with(0, std::nullopt, "futex"), rank_with(1, std::nullopt, "futex")});
  EXPECT_FALSE(one_place.culprit);
  // Ranks whose place is unknown count for nothing.
  auto unknown = of({rank_with(0, std::nullopt), rank_with(1, std::nullopt, "futex"),
                     rank_with(2, std::nullopt, "clock_nanosleep")});
  EXPECT_FALSE(unknown.culprit);
}

TEST(RankPlace, EveryRankInACollectiveNamesNobody) {
  PyStack barrier = in_all_reduce();
  barrier.threads[0].frames[0].function = "barrier";
  auto w = of({rank_with(0, in_all_reduce()), rank_with(1, barrier)});
  EXPECT_EQ(w.groups.size(), 2u);
  EXPECT_FALSE(w.culprit);
}

// The alert, through the analysis: rank 2 asleep in its data loader while the others wait.
class StuckRank : public ::testing::Test {
 protected:
  StuckRank() : job_("llama") {
    spec_.world_size = 4;
    spec_.thresholds.step_timeout_min = Millis(2'000);
  }

  RankReport at(int rank, int64_t step, int64_t stale_ms) {
    RankReport r = rank_with(rank, std::nullopt);
    r.alive = true;
    r.step = step;
    r.step_reports = static_cast<uint64_t>(step + 1);
    r.last_step_age_ms = stale_ms;
    return r;
  }

  void report(const std::string& node, std::vector<RankReport> ranks) {
    NodeReport r;
    r.node = node;
    r.report_every = Millis(1'000);
    r.ranks = std::move(ranks);
    ASSERT_TRUE(job_.ingest(r, clock_.monotonic_time(), clock_.system_time()));
  }

  // Ten seconds of training at 10 steps a second, then no step for `stalled_s` seconds.
  int64_t train_then_stall(int stalled_s, const std::function<void(RankReport&)>& where) {
    int64_t step = 0;
    for (int i = 0; i <= 10; ++i, step += 10) {
      report("node-a", {at(0, step, 0), at(1, step, 0)});
      report("node-b", {at(2, step, 0), at(3, step, 0)});
      clock_.advance(Millis(1'000));
    }
    step -= 10;
    for (int s = 0; s < stalled_s; ++s) {
      std::vector<RankReport> a{at(0, step, 1'000 * (s + 1)), at(1, step, 1'000 * (s + 1))};
      std::vector<RankReport> b{at(2, step, 1'000 * (s + 1)), at(3, step, 1'000 * (s + 1))};
      for (auto& r : a) where(r);
      for (auto& r : b) where(r);
      report("node-a", a);
      report("node-b", b);
      clock_.advance(Millis(1'000));
    }
    return step;
  }

  JobVerdict verdict() { return analyze(job_, spec_, clock_.monotonic_time(), clock_.system_time()); }

  ManualClock clock_;
  JobState job_;
  JobCheckSpec spec_;
};

TEST_F(StuckRank, TheAlertNamesTheRankOutsideTheCollectiveAndWhereItIs) {
  const int64_t step = train_then_stall(4, [](RankReport& r) {
    r.stack = RankStack{r.rank == 2 ? in_data_loader() : in_all_reduce(), "", 500};
  });
  JobVerdict v = verdict();
  ASSERT_TRUE(v.down) << v.cause;
  EXPECT_EQ(v.findings.front().code, "rank_stuck");
  EXPECT_EQ(v.findings.front().ranks, std::vector<int>{2});
  EXPECT_EQ(v.cause.rfind("rank 2 (node-b, pid 102) is stuck in fetch_next_shard (data.py:31) at step " +
                              std::to_string(step) +
                              ": no step for 5s (step timeout 2s); ranks 0-1,3 are in "
                              "all_reduce (train.py:57); ranks 0-1,3 waiting since ",
                          0),
            0u)
      << v.cause;
}

TEST_F(StuckRank, SystemCallsAloneNameTheSleeper) {
  train_then_stall(4, [](RankReport& r) { r.syscall = r.rank == 2 ? "clock_nanosleep" : "futex"; });
  JobVerdict v = verdict();
  ASSERT_TRUE(v.down) << v.cause;
  EXPECT_EQ(v.findings.front().code, "rank_stuck");
  EXPECT_EQ(v.cause.rfind("rank 2 (node-b, pid 102) is stuck in clock_nanosleep at step ", 0), 0u) << v.cause;
}

TEST_F(StuckRank, WithNothingToTellThemApartTheStallNamesEveryRankWithoutGuessingWhere) {
  const int64_t step = train_then_stall(4, [](RankReport&) {});
  JobVerdict v = verdict();
  ASSERT_TRUE(v.down) << v.cause;
  EXPECT_EQ(v.findings.front().code, "job_stalled");
  EXPECT_EQ(
      v.cause.rfind("all running ranks (0-3) stuck at step " + std::to_string(step) + ": no step for 5s", 0),
      0u)
      << v.cause;
}

TEST_F(StuckRank, ASharedPlaceIsSaid) {
  const int64_t step = train_then_stall(4, [](RankReport& r) {
    r.stack = RankStack{in_all_reduce(), "", 500};
  });
  JobVerdict v = verdict();
  ASSERT_TRUE(v.down) << v.cause;
  EXPECT_EQ(v.cause.rfind("all running ranks (0-3) stuck at step " + std::to_string(step) +
                              " in all_reduce (train.py:57): no step for 5s",
                          0),
            0u)
      << v.cause;
}

}  // namespace
}  // namespace trainwatch::jobs
