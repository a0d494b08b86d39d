// JobState's own bookkeeping that analysis reads: how often a job-wide throughput sample is
// taken as its nodes' report intervals change, and what a rank's window says its steps cost.
#include "jobs/job_state.h"

#include <gtest/gtest.h>

#include "jobs/rank_reports.h"

namespace trainwatch::jobs {
namespace {

using testing::node_report;
using testing::training;

// Node "fast" reports every `fast_every`, node "slow" every 5 s, both for `seconds`, one
// report a second each when due; returns the throughput samples taken in that time.
size_t samples_over(JobState& job, MonoTime& now, int seconds, Millis fast_every) {
  const size_t before = job.throughput().size();
  for (int s = 0; s < seconds; ++s) {
    now += Millis{1'000};
    const auto step = (now - MonoTime{}) / Millis{100};
    if ((now - MonoTime{}) % fast_every == Millis{0})
      job.ingest(node_report("fast", {training(0, step)}, fast_every), now,
                 SystemTime{} + (now - MonoTime{}));
    if ((now - MonoTime{}) % Millis{5'000} == Millis{0})
      job.ingest(node_report("slow", {training(1, step)}, Millis{5'000}), now,
                 SystemTime{} + (now - MonoTime{}));
  }
  return job.throughput().size() - before;
}

// One sample per shortest report interval: a node reporting every second makes the job's
// samples a second apart; once it slows to 5 s, they are 5 s apart again.
TEST(JobState, ThroughputIsSampledAtTheShortestReportIntervalAsItChanges) {
  JobState job("j");
  MonoTime now{};
  samples_over(job, now, 10, Millis{1'000});  // every rank has two samples
  EXPECT_EQ(samples_over(job, now, 20, Millis{1'000}), 20u);
  EXPECT_EQ(samples_over(job, now, 20, Millis{5'000}), 4u);
  EXPECT_EQ(samples_over(job, now, 20, Millis{2'000}), 10u);
}

// Rank 0 evaluates alone for 9 s, undeclared, while rank 1 waits for it in dist.barrier()
// (their collective marks say so), at 10 steps a second before and after: the pause is
// found a report late, yet no throughput sample holds any of it, nor the two windows after.
TEST(JobState, APauseAtABarrierLeavesNoSampleInTheThroughput) {
  JobState job("j");
  MonoTime now{};
  int64_t step = 0;
  auto report = [&](int64_t steps, int64_t stale_ms, bool waiting) {
    now += Millis{1'000};
    step += steps;
    std::vector<RankReport> ranks{training(0, step), training(1, step)};
    for (auto& r : ranks) {
      r.last_step_age_ms = stale_ms;
      const bool in_barrier = waiting && r.rank == 1;
      r.collective = jobs::CollectiveReport{static_cast<uint64_t>(step + (in_barrier ? 1 : 0)),
                                            in_barrier ? "barrier" : "all_reduce", in_barrier, 0, 0};
    }
    job.ingest(node_report("a", ranks, Millis{1'000}), now, SystemTime{} + (now - MonoTime{}));
  };
  for (int s = 0; s < 20; ++s) report(10, 0, false);
  report(3, 700, true);  // the last steps, then into the barrier 0.3 s into the window
  for (int s = 1; s <= 9; ++s) report(0, 700 + 1'000 * s, true);
  report(5, 500, false);  // out of it 0.5 s into the window
  for (int s = 0; s < 10; ++s) report(10, 0, false);
  const auto& samples = job.training_throughput();
  ASSERT_GE(samples.size(), 20u);
  for (const auto& x : samples) EXPECT_DOUBLE_EQ(x.value, 10.0) << (x.at - MonoTime{}).count();
  EXPECT_EQ(samples.back().at, now);
}

// Rank 0 checkpoints for 10 s on node "a" while the others wait, then all four step 10 times
// a second again, 100 tokens a step; node "b" reports half a second after node "a", so its
// ranks' windows hold the pause a report longer. No throughput sample is the sum of node
// "a"'s ranks alone: each is the whole job's 4,000 tokens/s.
TEST(JobState, AWindowThatHoldsAPauseOnOneNodeOnlyLeavesNoSampleInTheThroughput) {
  JobState job("j");
  MonoTime now{};
  int64_t step = 0;
  auto report = [&](const std::string& node, std::vector<int> ranks, bool checkpointing) {
    std::vector<RankReport> reports;
    for (int rank : ranks) {
      RankReport r = training(rank, step);
      r.tokens = static_cast<uint64_t>(100 * step);
      if (checkpointing && rank == 0) r.status = jobs::RankStatus::kCheckpointing;
      reports.push_back(r);
    }
    job.ingest(node_report(node, reports, Millis{1'000}), now, SystemTime{} + (now - MonoTime{}));
  };
  auto second = [&](int64_t steps, bool checkpointing) {
    now += Millis{500};
    step += steps / 2;
    report("a", {0, 1}, checkpointing);
    now += Millis{500};
    step += steps - steps / 2;
    report("b", {2, 3}, checkpointing);
  };
  for (int s = 0; s < 20; ++s) second(10, false);
  for (int s = 0; s < 10; ++s) second(0, true);
  for (int s = 0; s < 20; ++s) second(10, false);
  const auto& samples = job.training_throughput();
  ASSERT_GE(samples.size(), 30u);
  for (const auto& x : samples) EXPECT_NEAR(x.value, 4'000.0, 1.0) << (x.at - MonoTime{}).count();
}

// A rank that steps every 0.5 s, then works 4.5 s without a step while its peers wait for it
// in a barrier (rank 0 evaluating, undeclared), then steps again: its step costs leave out
// the window that ends the pause and the windows without a step inside it, not only the
// former; else the pause reads as busy time a step, and rank 0 as a straggler.
TEST(StepCosts, LeaveOutAPauseAndTheWindowsWithoutAStepInsideIt) {
  std::deque<ProgressSample> window;
  uint64_t steps = 100;
  for (int s = 0; s <= 11; ++s) {
    const bool paused = s >= 6 && s <= 9;
    if (!paused) steps += 2;
    ProgressSample p;
    p.at = MonoTime{} + Millis(1'000 * s);
    p.step_reports = steps;
    p.cpu_s = 0.1 * s;
    p.wait_s = 0;  // never found in a collective: its time is all its own
    p.sampled_s = s;
    p.max_gap_ms = s == 10 ? 4'500 : 500;
    window.push_back(p);
  }
  const StepCosts c = step_costs(window);
  EXPECT_EQ(c.steps, 12u);  // 0 s to 5 s, and 10 s to 11 s
  EXPECT_DOUBLE_EQ(c.wall_s, 6.0);
  EXPECT_DOUBLE_EQ(c.busy_s, 6.0);
}

}  // namespace
}  // namespace trainwatch::jobs
