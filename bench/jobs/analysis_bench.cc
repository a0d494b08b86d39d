// One beat of the job analysis (jobs/analysis.h) on a job the size of bench_scale.py's:
// 2,048 nodes of 8 ranks, each node having reported every 5 s for a minute, every rank
// training. Run: build/bench/jobs/analysis_bench --benchmark_repetitions=3
#include <benchmark/benchmark.h>

#include <string>

#include "jobs/analysis.h"
#include "jobs/job_state.h"

namespace trainwatch::jobs {
namespace {

constexpr int kRanksPerNode = 8;
constexpr Millis kReportEvery{5'000};
constexpr int kReportsEach = 12;  // a minute of history: the rolling windows are full

RankReport training(int rank, int64_t step, double cpu_s) {
  RankReport r;
  r.rank = rank;
  r.local_rank = rank % kRanksPerNode;
  r.pid = 100'000 + rank;
  r.alive = true;
  r.state = 'S';
  r.status = RankStatus::kTraining;
  r.step = step;
  r.step_reports = static_cast<uint64_t>(step + 1);
  r.last_step_age_ms = 40;
  r.max_step_gap_ms = 120;
  r.cpu_s = cpu_s;
  r.loss = 2.0;
  return r;
}

// The job after kReportsEach rounds of reports, nodes spread evenly over each interval,
// at 10 steps a second; `now` is the instant of the last report.
JobState big_job(int nodes, MonoTime& now, SystemTime& wall) {
  JobState job("bench");
  const MonoTime start{};
  const SystemTime wall_start{};
  for (int round = 0; round < kReportsEach; ++round) {
    for (int n = 0; n < nodes; ++n) {
      const Millis at = round * kReportEvery + kReportEvery * n / nodes;
      NodeReport report;
      report.node = "node-" + std::to_string(n);
      report.report_every = kReportEvery;
      report.seq = static_cast<uint64_t>(round);
      const int64_t step = at.count() / 100;
      for (int i = 0; i < kRanksPerNode; ++i)
        report.ranks.push_back(training(n * kRanksPerNode + i, step, static_cast<double>(at.count()) / 1000));
      now = start + at;
      wall = wall_start + at;
      job.ingest(report, now, wall);
    }
  }
  return job;
}

void analyze_a_training_job(benchmark::State& state) {
  MonoTime now;
  SystemTime wall;
  const JobState job = big_job(static_cast<int>(state.range(0)), now, wall);
  JobCheckSpec spec;
  spec.world_size = static_cast<int>(state.range(0)) * kRanksPerNode;
  for (auto _ : state) {
    JobVerdict v = analyze(job, spec, now + Millis(500), wall + Millis(500));
    benchmark::DoNotOptimize(v);
  }
  state.counters["ranks"] = static_cast<double>(spec.world_size);
}
BENCHMARK(analyze_a_training_job)->Arg(16)->Arg(2'048)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace trainwatch::jobs

BENCHMARK_MAIN();
