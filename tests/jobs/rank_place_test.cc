// Where ranks are when a job stalls (rank_place.h), and the alert that names the one the
// others wait for: reports carrying stacks or system calls go in on a manual clock.
#include "jobs/rank_place.h"

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "fakes/manual_clock.h"
#include "jobs/analysis.h"
#include "jobs/interruption.h"
#include "jobs/job_memo.h"
#include "jobs/job_state.h"
#include "jobs/kept_stacks.h"

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

// The main thread of a rank waiting in broadcast, called from train.py line 80.
PyStack in_broadcast() {
  PyThreadStack t;
  t.frames = {{kTorch, 1401, "broadcast"}, {"/work/train.py", 80, "<module>"}};
  return PyStack{{t}, false};
}

// The main thread of a rank waiting in dist.barrier(), called from train.py line 90, as
// torch 2 has it: the c10d function behind its logging decorator's `wrapper`.
PyStack in_barrier() {
  PyThreadStack t;
  t.frames = {{kTorch, 3680, "barrier"},
              {"/usr/lib/python3/dist-packages/torch/distributed/c10d_logger.py", 79, "wrapper"},
              {"/work/train.py", 90, "<module>"}};
  return PyStack{{t}, false};
}

// Rank 0 evaluating on its own, called from train.py line 88.
PyStack in_evaluate() {
  PyThreadStack t;
  t.frames = {{"/work/train.py", 40, "evaluate"}, {"/work/train.py", 88, "<module>"}};
  return PyStack{{t}, false};
}

RankReport rank_with(int rank, std::optional<PyStack> stack, std::string syscall = "") {
  RankReport r;
  r.rank = rank;
  r.pid = 100 + rank;
  r.state = 'S';
  r.status = RankStatus::kTraining;
  r.syscall = std::move(syscall);
  if (stack) r.stack = RankStack{std::move(*stack), "", 0, {}, "", {}};
  return r;
}

Whereabouts of(const std::vector<RankReport>& ranks) {
  std::vector<std::pair<int, const RankReport*>> in;
  in.reserve(ranks.size());
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

// Ranks 0-1's stacks have not come (their agent asks on its own schedule): their system call
// alone would set them apart from rank 3, beside whom their marks say they wait.
TEST(RankPlace, ARankKnownByItsSystemCallJoinsTheCollectiveItsMarksAndAPeersStackShow) {
  std::vector<RankReport> ranks{rank_with(0, std::nullopt, "futex"), rank_with(1, std::nullopt, "futex"),
                                rank_with(2, in_data_loader()), rank_with(3, in_all_reduce())};
  for (int rank : {0, 1}) ranks[rank].collective = CollectiveReport{40, "all_reduce", true, 0, 0};
  auto w = of(ranks);
  ASSERT_EQ(w.groups.size(), 2u);
  EXPECT_EQ(w.groups[0].place.text, "in all_reduce (train.py:57)");
  EXPECT_EQ(w.groups[0].ranks, (std::vector<int>{0, 1, 3}));
  ASSERT_TRUE(w.culprit);
  EXPECT_EQ(w.groups[*w.culprit].ranks, std::vector<int>{2});

  for (int rank : {0, 1}) ranks[rank].collective->kind = "broadcast";  // not where rank 3 is
  w = of(ranks);
  ASSERT_EQ(w.groups.size(), 3u);
  EXPECT_EQ(w.groups[0].place.text, "in futex");
}

constexpr const char* kLoader = "/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py";
constexpr const char* kQueues = "/usr/lib/python3.11/multiprocessing/queues.py";
constexpr const char* kWorker = "/usr/lib/python3/dist-packages/torch/utils/data/_utils/worker.py";
constexpr const char* kFetch = "/usr/lib/python3/dist-packages/torch/utils/data/_utils/fetch.py";

// The main thread of a rank whose DataLoader waits for a worker's batch.
PyStack waiting_on_its_loader() {
  PyThreadStack t;
  t.frames = {{"/usr/lib/python3.11/multiprocessing/connection.py", 440, "_poll"},
              {kQueues, 113, "get"},
              {kLoader, 1120, "_try_get_data"},
              {kLoader, 1266, "_get_data"},
              {kLoader, 1303, "_next_data"},
              {kLoader, 628, "__next__"},
              {"/work/train.py", 40, "<module>"}};
  return PyStack{{t}, false};
}

// A worker in the dataset's __getitem__, and one idle in its loop waiting for an index.
ChildPyStack worker_in_getitem(int32_t pid) {
  PyThreadStack t;
  t.frames = {{"/work/data.py", 12, "__getitem__"},
              {kFetch, 58, "<listcomp>"},
              {kFetch, 58, "fetch"},
              {kWorker, 302, "_worker_loop"}};
  return ChildPyStack{pid, PyStack{{t}, false}};
}
ChildPyStack idle_worker(int32_t pid) {
  PyThreadStack t;
  t.frames = {{kQueues, 113, "get"}, {kWorker, 281, "_worker_loop"}};
  return ChildPyStack{pid, PyStack{{t}, false}};
}

RankReport with_children(RankReport r, std::vector<ChildPyStack> children) {
  r.stack->children = std::move(children);
  return r;
}

TEST(RankPlace, ARankWaitingOnItsLoaderIsWhereItsBusyWorkerIs) {
  auto place = place_of(
      with_children(rank_with(2, waiting_on_its_loader()), {idle_worker(300), worker_in_getitem(301)}));
  ASSERT_TRUE(place);
  EXPECT_EQ(place->text, "waiting for DataLoader worker (pid 301) in __getitem__ (data.py:12)");
  EXPECT_EQ(place->kind, RankPlace::Kind::kElsewhere);
}

TEST(RankPlace, WithoutABusyWorkerTheRanksOwnCallIsThePlace) {
  for (const auto& children : {std::vector<ChildPyStack>{}, std::vector<ChildPyStack>{idle_worker(300)}}) {
    auto place = place_of(with_children(rank_with(2, waiting_on_its_loader()), children));
    ASSERT_TRUE(place);
    EXPECT_EQ(place->text, "in __next__ (train.py:40)");
  }
}

TEST(RankPlace, AQueueGetWithoutALoaderNamesTheChildProcess) {
  PyStack queue_get = waiting_on_its_loader();
  auto& frames = queue_get.threads[0].frames;
  frames.erase(frames.begin() + 2, frames.end() - 1);
  auto place = place_of(with_children(rank_with(1, queue_get), {worker_in_getitem(301)}));
  ASSERT_TRUE(place);
  EXPECT_EQ(place->text, "waiting for child process (pid 301) in __getitem__ (data.py:12)");
}

TEST(RankPlace, AWorkersStackIsNotThePlaceOfARankThatWaitsOnNothingOfIt) {
  // In a collective, or in its own code (a loader without workers calls the dataset itself).
  auto in_collective = place_of(with_children(rank_with(0, in_all_reduce()), {worker_in_getitem(301)}));
  EXPECT_EQ(in_collective->text, "in all_reduce (train.py:57)");
  PyStack own = waiting_on_its_loader();
  own.threads[0].frames.insert(own.threads[0].frames.begin(), PyFrame{"/work/data.py", 12, "__getitem__"});
  auto in_own_code = place_of(with_children(rank_with(2, own), {worker_in_getitem(301)}));
  EXPECT_EQ(in_own_code->text, "in __getitem__ (data.py:12)");
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

  JobVerdict verdict() { return analyse(job_, spec_, clock_.monotonic_time(), clock_.system_time()); }

  ManualClock clock_;
  JobState job_;
  JobCheckSpec spec_;
};

TEST_F(StuckRank, TheAlertNamesTheRankOutsideTheCollectiveAndWhereItIs) {
  const int64_t step = train_then_stall(4, [](RankReport& r) {
    r.stack = RankStack{r.rank == 2 ? in_data_loader() : in_all_reduce(), "", 500, {}, "", {}};
  });
  JobVerdict v = verdict();
  ASSERT_TRUE(v.down) << v.cause;
  EXPECT_EQ(v.findings.front().code, FindingCode::kRankStuck);
  EXPECT_EQ(v.findings.front().ranks, std::vector<int>{2});
  EXPECT_EQ(v.cause.rfind("rank 2 (node-b, pid 102) is stuck in fetch_next_shard (data.py:31) at step " +
                              std::to_string(step) +
                              ": no step for 5s (step timeout 2s); ranks 0-1,3 are in "
                              "all_reduce (train.py:57), waiting since ",
                          0),
            0u)
      << v.cause;
}

TEST_F(StuckRank, TheAlertNamesTheWorkerARankWaitsOnAndItsFrame) {
  train_then_stall(4, [](RankReport& r) {
    r.stack = RankStack{r.rank == 2 ? waiting_on_its_loader() : in_all_reduce(), "", 500, {}, "", {}};
    if (r.rank == 2) r.stack->children = {idle_worker(300), worker_in_getitem(301)};
  });
  JobVerdict v = verdict();
  ASSERT_TRUE(v.down) << v.cause;
  EXPECT_EQ(v.findings.front().ranks, std::vector<int>{2});
  EXPECT_EQ(v.cause.rfind("rank 2 (node-b, pid 102) is stuck waiting for DataLoader worker (pid 301) in "
                          "__getitem__ (data.py:12) at step ",
                          0),
            0u)
      << v.cause;
}

// Before the step timeout: a warning to the channels once the stall outlasts
// early_warning_after (6 s here), while the page waits for the timeout.
TEST_F(StuckRank, AWarningNamesTheRankOutsideTheCollectiveLongBeforeThePage) {
  spec_.thresholds.step_timeout_min = Millis(60'000);
  auto where = [](RankReport& r) {
    r.stack = RankStack{r.rank == 2 ? in_data_loader() : in_all_reduce(), "", 500, {}, "", {}};
  };
  train_then_stall(4, where);  // no step for 5 s: not yet
  JobVerdict v = verdict();
  EXPECT_FALSE(v.down);
  EXPECT_FALSE(v.notify) << v.cause;
  const int64_t step = train_then_stall(6, where);  // 7 s
  v = verdict();
  ASSERT_FALSE(v.down) << v.cause;
  ASSERT_TRUE(v.notify) << v.cause;
  EXPECT_EQ(v.findings.front().code, FindingCode::kRankSuspected);
  EXPECT_EQ(v.findings.front().severity, Severity::kWarning);
  EXPECT_EQ(v.findings.front().ranks, std::vector<int>{2});
  EXPECT_EQ(
      v.cause.rfind("rank 2 (node-b, pid 102) is likely stuck in fetch_next_shard (data.py:31) at step " +
                        std::to_string(step) +
                        ": no step for 7s; ranks 0-1,3 are in all_reduce (train.py:57) (a page follows at "
                        "the 1m step timeout if no step comes)",
                    0),
      0u)
      << v.cause;
}

TEST_F(StuckRank, NoEarlyWarningWhenHalfTheRanksAreElsewhere) {
  spec_.thresholds.step_timeout_min = Millis(60'000);
  train_then_stall(8, [](RankReport& r) {
    r.stack = RankStack{r.rank >= 2 ? in_data_loader() : in_all_reduce(), "", 500, {}, "", {}};
  });
  JobVerdict v = verdict();
  EXPECT_FALSE(v.down);
  EXPECT_FALSE(v.notify) << v.cause;
}

// Rank 1 entered a broadcast while the others wait in all_reduce: every rank is in a
// collective, so none is "outside" it, but the collectives disagree. A warning names rank 1,
// both calls and their lines, and the mismatch; the page at the step timeout says the same.
TEST_F(StuckRank, ACollectiveMismatchIsNamedInAWarningAndInThePage) {
  spec_.thresholds.step_timeout_min = Millis(60'000);
  auto where = [](RankReport& r) {
    r.stack = RankStack{r.rank == 1 ? in_broadcast() : in_all_reduce(), "", 500, {}, "", {}};
  };
  const int64_t step = train_then_stall(7, where);
  JobVerdict v = verdict();
  ASSERT_FALSE(v.down) << v.cause;
  ASSERT_TRUE(v.notify) << v.cause;
  EXPECT_EQ(v.findings.front().code, FindingCode::kCollectiveMismatch);
  EXPECT_EQ(v.findings.front().ranks, std::vector<int>{1});
  EXPECT_EQ(v.cause,
            "rank 1 (node-a, pid 101) is in broadcast (train.py:80), likely a collective mismatch at step " +
                std::to_string(step) +
                ": no step for 8s; ranks 0,2-3 are in all_reduce (train.py:57) (a page follows at the 1m "
                "step timeout if no step comes)");
  train_then_stall(60, where);
  v = verdict();
  ASSERT_TRUE(v.down) << v.cause;
  EXPECT_EQ(v.findings.front().code, FindingCode::kCollectiveMismatch);
  EXPECT_EQ(v.cause.rfind(
                "rank 1 (node-a, pid 101) is in broadcast (train.py:80), a collective mismatch at step ", 0),
            0u)
      << v.cause;
  EXPECT_NE(v.cause.find("; ranks 0,2-3 are in all_reduce (train.py:57), waiting since "), std::string::npos)
      << v.cause;
  InterruptionLedger ledger;
  ledger.observe(job_, v, clock_.monotonic_time(), clock_.system_time());
  ASSERT_EQ(ledger.entries().size(), 1u);
  EXPECT_EQ(ledger.entries()[0].cause.kind, InterruptionKind::kHangInCollective);
  EXPECT_EQ(ledger.entries()[0].cause.detail, "collective mismatch");
}

// Two ranks in broadcast, two in all_reduce: a mismatch for certain, but which side went
// astray is not; the page says both, and no warning guesses.
TEST_F(StuckRank, AnEvenMismatchNamesBothSidesInThePageAndWarnsNobody) {
  auto where = [](RankReport& r) {
    r.stack = RankStack{r.rank < 2 ? in_broadcast() : in_all_reduce(), "", 500, {}, "", {}};
  };
  const int64_t step = train_then_stall(4, where);
  JobVerdict v = verdict();
  ASSERT_TRUE(v.down) << v.cause;
  EXPECT_EQ(v.findings.front().code, FindingCode::kCollectiveMismatch);
  EXPECT_EQ(v.cause.rfind("a collective mismatch at step " + std::to_string(step) +
                              ": ranks 0-1 are in broadcast (train.py:80); ranks 2-3 are in all_reduce "
                              "(train.py:57): no step for 5s",
                          0),
            0u)
      << v.cause;
}

// Rank 0 evaluates alone while ranks 1-3 wait for it in dist.barrier(), the most common
// pattern of a training script: a phase of the job, not a suspect. No warning; the step
// timeout still pages if it never ends.
TEST_F(StuckRank, RanksWaitingInABarrierForRankZeroAreNoEarlyWarning) {
  spec_.thresholds.step_timeout_min = Millis(60'000);
  auto where = [](RankReport& r) {
    r.stack = RankStack{r.rank == 0 ? in_evaluate() : in_barrier(), "", 500, {}, "", {}};
  };
  const int64_t step = train_then_stall(30, where);
  JobVerdict v = verdict();
  EXPECT_FALSE(v.down) << v.cause;
  EXPECT_FALSE(v.notify) << v.cause;
  EXPECT_TRUE(v.findings.empty()) << v.cause;
  for (int s = 31; s <= 70; ++s) {
    std::vector<RankReport> ranks;
    for (int rank = 0; rank < 4; ++rank) {
      ranks.push_back(at(rank, step, 1'000 * s));
      where(ranks.back());
    }
    report("node-a", {ranks[0], ranks[1]});
    report("node-b", {ranks[2], ranks[3]});
    clock_.advance(Millis(1'000));
    if (s < 60) {
      EXPECT_FALSE(verdict().notify) << s << " s: " << verdict().cause;
    }
  }
  v = verdict();
  ASSERT_TRUE(v.down) << v.cause;
  EXPECT_EQ(v.cause.rfind("rank 0 (node-a, pid 100) is stuck in evaluate (train.py:40) at step ", 0), 0u)
      << v.cause;
  EXPECT_NE(v.cause.find("; ranks 1-3 are in barrier (train.py:90)"), std::string::npos) << v.cause;
}

TEST(EarlyWarningAfter, FourStepGapsWithASixSecondFloor) {
  EXPECT_EQ(early_warning_after(std::nullopt), Millis(6'000));
  EXPECT_EQ(early_warning_after(Millis(500)), Millis(6'000));
  EXPECT_EQ(early_warning_after(Millis(3'000)), Millis(12'000));
}

TEST_F(StuckRank, SystemCallsAloneNameTheSleeper) {
  train_then_stall(4, [](RankReport& r) { r.syscall = r.rank == 2 ? "clock_nanosleep" : "futex"; });
  JobVerdict v = verdict();
  ASSERT_TRUE(v.down) << v.cause;
  EXPECT_EQ(v.findings.front().code, FindingCode::kRankStuck);
  EXPECT_EQ(v.cause.rfind("rank 2 (node-b, pid 102) is stuck in clock_nanosleep at step ", 0), 0u) << v.cause;
}

TEST_F(StuckRank, WithNothingToTellThemApartTheStallNamesEveryRankWithoutGuessingWhere) {
  const int64_t step = train_then_stall(4, [](RankReport&) {});
  JobVerdict v = verdict();
  ASSERT_TRUE(v.down) << v.cause;
  EXPECT_EQ(v.findings.front().code, FindingCode::kJobStalled);
  EXPECT_EQ(
      v.cause.rfind("all running ranks (0-3) stuck at step " + std::to_string(step) + ": no step for 5s", 0),
      0u)
      << v.cause;
}

TEST_F(StuckRank, ASharedPlaceIsSaid) {
  const int64_t step =
      train_then_stall(4, [](RankReport& r) { r.stack = RankStack{in_all_reduce(), "", 500, {}, "", {}}; });
  JobVerdict v = verdict();
  ASSERT_TRUE(v.down) << v.cause;
  EXPECT_EQ(v.cause.rfind("all running ranks (0-3) stuck at step " + std::to_string(step) +
                              " in all_reduce (train.py:57): no step for 5s",
                          0),
            0u)
      << v.cause;
}

TEST_F(StuckRank, TheHangsStacksStayWithItsInterruptionAfterTheJobRecovers) {
  // The verdict comes before any stack: the agents ask for one once a step is overdue.
  const int64_t step =
      train_then_stall(4, [](RankReport& r) { r.syscall = r.rank == 2 ? "clock_nanosleep" : "futex"; });
  InterruptionLedger ledger;
  ASSERT_TRUE(ledger.observe(job_, verdict(), clock_.monotonic_time(), clock_.system_time()));
  ASSERT_TRUE(ledger.open());
  EXPECT_TRUE(ledger.entries().back().stacks.empty());

  // The stacks come in the next reports; the interruption keeps the first capture.
  clock_.advance(Millis(1'000));
  std::vector<RankReport> stalled;
  for (int rank = 0; rank < 4; ++rank) {
    stalled.push_back(at(rank, step, 6'000));
    stalled.back().stack = RankStack{rank == 2 ? in_data_loader() : in_all_reduce(), "", 500, {}, "", {}};
  }
  // Rank 2's agent took its native frames too: asleep in libc under time.sleep.
  stalled[2].stack->native.threads.push_back(
      NativeThread{102, {{"clock_nanosleep@GLIBC_2.2.5", "libc.so.6"}, {"0x5d64b4", "python3.11"}}});
  report("node-a", {stalled[0], stalled[1]});
  report("node-b", {stalled[2], stalled[3]});
  ASSERT_TRUE(verdict().down);
  EXPECT_TRUE(ledger.observe(job_, verdict(), clock_.monotonic_time(), clock_.system_time()));
  EXPECT_FALSE(ledger.observe(job_, verdict(), clock_.monotonic_time(), clock_.system_time()))
      << "one capture per interruption";

  // Rank 2's loader returns: training again, and the live stacks are gone.
  for (int i = 1; i <= 3; ++i) {
    report("node-a", {at(0, step + i, 0), at(1, step + i, 0)});
    report("node-b", {at(2, step + i, 0), at(3, step + i, 0)});
    clock_.advance(Millis(100));
  }
  ASSERT_TRUE(ledger.observe(job_, verdict(), clock_.monotonic_time(), clock_.system_time()));
  ASSERT_FALSE(ledger.open());

  const auto check = [](const std::vector<KeptStackGroup>& kept) {
    ASSERT_EQ(kept.size(), 2u);
    EXPECT_TRUE(kept[0].culprit);
    EXPECT_EQ(kept[0].place, "in fetch_next_shard (data.py:31)");
    EXPECT_EQ(kept[0].ranks, std::vector<int>{2});
    EXPECT_EQ(kept[0].sample_rank, 2);
    ASSERT_EQ(kept[0].frames.size(), 2u);
    EXPECT_EQ(kept[0].frames[0].function, "fetch_next_shard");
    EXPECT_EQ(kept[0].frames[0].file, "/work/data.py");
    EXPECT_EQ(kept[0].frames[0].line, 31);
    ASSERT_EQ(kept[0].native.size(), 2u);
    EXPECT_EQ(kept[0].native[0].function, "clock_nanosleep@GLIBC_2.2.5");
    EXPECT_EQ(kept[0].native[0].module, "libc.so.6");
    EXPECT_EQ(kept[0].native[1].function, "0x5d64b4");
    EXPECT_FALSE(kept[1].culprit);
    EXPECT_EQ(kept[1].place, "in all_reduce (train.py:57)");
    EXPECT_EQ(kept[1].ranks, (std::vector<int>{0, 1, 3}));
    EXPECT_EQ(kept[1].rank_count, 3u);
    EXPECT_TRUE(kept[1].native.empty()) << "rank 0's agent took no native frames";
  };
  check(ledger.entries().back().stacks);

  // A restarted server reads them back from the job's memo.
  JobState resumed("llama");
  InterruptionLedger read_back;
  ASSERT_TRUE(apply_job_memo(encode_job_memo(job_, ledger, clock_.monotonic_time(), clock_.system_time()),
                             resumed, read_back, clock_.monotonic_time(), clock_.system_time())
                  .ok());
  ASSERT_EQ(read_back.entries().size(), 1u);
  check(read_back.entries().back().stacks);
}

// A hang's finding, whose kept stacks name the place the others wait for.
Finding stall_finding() {
  Finding f;
  f.code = FindingCode::kJobStalled;
  return f;
}

// A stack captured before the job's last step shows where a rank was then, not where the
// job stopped: kept beside a fresh one, it made rank 0 the culprit "the others waited for".
TEST_F(StuckRank, OnlyStacksCapturedSinceTheLastStepAreKept) {
  const int64_t step = train_then_stall(4, [](RankReport&) {});
  RankReport fresh = at(0, step, 5'000);
  fresh.stack = RankStack{in_data_loader(), "", 1'500, {}, "", {}};
  RankReport stale = at(1, step, 5'000);
  stale.stack = RankStack{in_all_reduce(), "", 30'000, {}, "", {}};  // taken 25 s before the last step
  report("node-a", {fresh, stale});
  const std::vector<KeptStackGroup> kept = keep_stacks(job_, stall_finding());
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].ranks, std::vector<int>{0});
  EXPECT_FALSE(kept[0].culprit);
}

TEST_F(StuckRank, AStallThatOpenedWithoutACulpritTakesItAndItsStacksOnceTheyNameIt) {
  // Nothing tells the ranks apart at the verdict: the interruption opens as a stall.
  const int64_t step = train_then_stall(4, [](RankReport&) {});
  InterruptionLedger ledger;
  ASSERT_TRUE(ledger.observe(job_, verdict(), clock_.monotonic_time(), clock_.system_time()));
  ASSERT_EQ(ledger.entries().back().code, FindingCode::kJobStalled);
  const InterruptionKind stalled = ledger.entries().back().cause.kind;
  const uint64_t revision = ledger.revision();

  // The stacks come with each node's next report: node-a's first, its ranks waiting in
  // all_reduce, which is all the first capture holds.
  clock_.advance(Millis(1'000));
  std::vector<RankReport> stacks;
  for (int rank = 0; rank < 4; ++rank) {
    stacks.push_back(at(rank, step, 6'000));
    stacks.back().stack = RankStack{rank == 2 ? in_data_loader() : in_all_reduce(), "", 500, {}, "", {}};
  }
  report("node-a", {stacks[0], stacks[1]});
  ASSERT_TRUE(ledger.observe(job_, verdict(), clock_.monotonic_time(), clock_.system_time()));
  ASSERT_EQ(ledger.entries().back().code, FindingCode::kJobStalled);
  ASSERT_EQ(ledger.entries().back().stacks.size(), 1u);
  EXPECT_FALSE(ledger.entries().back().stacks[0].culprit);

  // Then node-b's, naming rank 2 in its data loader.
  report("node-b", {stacks[2], stacks[3]});
  ASSERT_TRUE(ledger.observe(job_, verdict(), clock_.monotonic_time(), clock_.system_time()));
  ASSERT_EQ(ledger.entries().size(), 1u) << "the same hang, not a second one";
  const Interruption& hang = ledger.entries().back();
  EXPECT_EQ(hang.code, FindingCode::kRankStuck);
  EXPECT_EQ(hang.cause.kind, InterruptionKind::kHangElsewhere);
  EXPECT_EQ(hang.message.rfind("rank 2 (node-b, pid 102) is stuck in fetch_next_shard (data.py:31)", 0), 0u)
      << hang.message;
  ASSERT_EQ(hang.stacks.size(), 2u) << "the capture that names it replaces the first";
  EXPECT_TRUE(hang.stacks[0].culprit);
  EXPECT_EQ(hang.stacks[0].ranks, std::vector<int>{2});
  EXPECT_EQ(hang.stacks[1].ranks, (std::vector<int>{0, 1, 3}));
  EXPECT_GT(ledger.revision(), revision) << "the job's memo is written again";
  EXPECT_EQ(ledger.totals().at(InterruptionKind::kHangElsewhere).count, 1u);
  EXPECT_EQ(ledger.totals().at(stalled).count, 0u);
  EXPECT_EQ(ledger.count(), 1u);
  EXPECT_FALSE(ledger.observe(job_, verdict(), clock_.monotonic_time(), clock_.system_time()));
}

// Rank 0 writes a 45 s checkpoint; the others wait for it in all_reduce and their agents
// take their stacks. Then rank 2 is SIGKILLed: the interruption is rank 2's, and its kept
// stacks blame nobody (rank 2 left none) rather than rank 0, whose place the others wait for.
TEST_F(StuckRank, TheKeptStacksOfAKillBlameTheKilledRankNotTheOneTheOthersWaitFor) {
  const int64_t step = train_then_stall(4, [](RankReport&) {});
  std::vector<RankReport> ranks;
  for (int rank = 0; rank < 4; ++rank) {
    ranks.push_back(at(rank, step, 5'000));
    ranks.back().stack = RankStack{rank == 0 ? in_data_loader() : in_all_reduce(), "", 500, {}, "", {}};
  }
  ranks[2].alive = false;
  ranks[2].state = '?';
  ranks[2].gone_age_ms = 0;
  ranks[2].exit = ProcessExit{-1, 9, false, false};
  ranks[2].stack.reset();
  report("node-a", {ranks[0], ranks[1]});
  report("node-b", {ranks[2], ranks[3]});
  InterruptionLedger ledger;
  ASSERT_TRUE(ledger.observe(job_, verdict(), clock_.monotonic_time(), clock_.system_time()));
  const Interruption& kill = ledger.entries().back();
  ASSERT_EQ(kill.code, FindingCode::kRankGone);
  ASSERT_EQ(kill.stacks.size(), 2u);
  EXPECT_FALSE(kill.stacks[0].culprit) << kill.stacks[0].place;
  EXPECT_FALSE(kill.stacks[1].culprit) << kill.stacks[1].place;
}

TEST(KeptStacks, AreBoundedInPlacesRanksAndFrames) {
  JobState job("big");
  NodeReport n;
  n.node = "node-a";
  for (int rank = 0; rank < 200; ++rank) {
    PyThreadStack t;
    // Rank 0..9 each in a place of its own; the rest all in one loop 60 frames deep.
    for (int depth = 0; depth < 60; ++depth)
      t.frames.push_back({"/work/train.py", rank < 10 ? rank + 1 : 100 + depth, "step"});
    RankReport r = rank_with(rank, PyStack{{t}, false});
    r.world_size = 200;
    n.ranks.push_back(r);
  }
  ManualClock clock;
  ASSERT_TRUE(job.ingest(n, clock.monotonic_time(), clock.system_time()));
  const auto kept = keep_stacks(job, stall_finding());
  ASSERT_EQ(kept.size(), kMaxKeptGroups);
  EXPECT_EQ(kept[0].rank_count, 190u) << "the most shared place first";
  EXPECT_EQ(kept[0].ranks.size(), kMaxKeptRanks);
  EXPECT_EQ(kept[0].frames.size(), kMaxKeptFrames);

  // Read back from a damaged memo: what is not a group is skipped, the bounds hold.
  boost::json::array groups = kept_stacks_json(kept);
  groups.push_back("not a group");
  for (int i = 0; i < 20; ++i) groups.push_back(groups.front());
  const auto read = kept_stacks_from_json(groups);
  EXPECT_EQ(read.size(), kMaxKeptGroups);
  EXPECT_EQ(read[0].rank_count, 190u);
}

}  // namespace
}  // namespace trainwatch::jobs
