// JobState's own bookkeeping that analysis reads: here, how often a job-wide throughput
// sample is taken as its nodes' report intervals change.
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

}  // namespace
}  // namespace trainwatch::jobs
