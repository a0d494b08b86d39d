// The server's work on the job of bench/jobs/bench_scale.py, without HTTP or the store:
// - one beat of the analysis (jobs/analysis.h) of 2,048 nodes of 8 ranks, each node having
//   reported every 5 s for a minute, every rank training;
// - one node report parsed (jobs/report.h), as bench_scale.py's agents send it: 8 ranks,
//   8 GPUs, one disk, about 6 KB.
// Run: build/bench/jobs/job_bench --benchmark_repetitions=3
#include <benchmark/benchmark.h>

#include <string>

#include "jobs/analysis.h"
#include "jobs/job_state.h"
#include "jobs/report.h"

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

void analyse_a_training_job(benchmark::State& state) {
  MonoTime now;
  SystemTime wall;
  const JobState job = big_job(static_cast<int>(state.range(0)), now, wall);
  JobCheckSpec spec;
  spec.world_size = static_cast<int>(state.range(0)) * kRanksPerNode;
  for (auto _ : state) {
    JobVerdict v = analyse(job, spec, now + Millis(500), wall + Millis(500));
    benchmark::DoNotOptimize(v);
  }
  state.counters["ranks"] = static_cast<double>(spec.world_size);
}
BENCHMARK(analyse_a_training_job)->Arg(16)->Arg(2'048)->Arg(16'384)->Unit(benchmark::kMillisecond);

// One more round of reports into the job above, one node at a time: what a report costs
// the replica that takes it, and every replica that follows it, under the job's lock.
void ingest_a_node_report(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  MonoTime now;
  SystemTime wall;
  JobState job = big_job(nodes, now, wall);
  std::vector<NodeReport> round;
  for (int n = 0; n < nodes; ++n) {
    NodeReport report;
    report.node = "node-" + std::to_string(n);
    report.report_every = kReportEvery;
    for (int i = 0; i < kRanksPerNode; ++i) report.ranks.push_back(training(n * kRanksPerNode + i, 0, 0));
    round.push_back(std::move(report));
  }
  int64_t sent = 0;
  for (auto _ : state) {
    NodeReport& report = round[static_cast<size_t>(sent % nodes)];
    now += kReportEvery / nodes;
    wall += kReportEvery / nodes;
    const int64_t step = (kReportsEach * kReportEvery.count() + sent * kReportEvery.count() / nodes) / 100;
    for (RankReport& r : report.ranks) {
      r.step = step;
      r.step_reports = static_cast<uint64_t>(step + 1);
      r.cpu_s = static_cast<double>(step) / 10;
    }
    benchmark::DoNotOptimize(job.ingest(report, now, wall));
    ++sent;
  }
}
BENCHMARK(ingest_a_node_report)->Arg(2'048)->Arg(16'384)->Unit(benchmark::kMicrosecond);

// A report of node `n` at `step`, field for field as bench_scale.py writes it.
std::string report_body(int n, int64_t step) {
  std::string ranks;
  for (int local = 0; local < kRanksPerNode; ++local) {
    const int rank = n * kRanksPerNode + local;
    const std::string s = std::to_string(step);
    ranks += std::string(ranks.empty() ? "" : ",") + R"({"rank":)" + std::to_string(rank) +
             R"(,"local_rank":)" + std::to_string(local) + R"(,"world_size":16384,"pid":)" +
             std::to_string(200'000 + rank) + R"(,"alive":true,"state":"R","status":"training","step":)" + s +
             R"(,"step_reports":)" + std::to_string(step + 1) +
             R"(,"last_step_age_ms":73,"max_step_gap_ms":200,"overflow_total":0,"overflow_consecutive":0,)"
             R"("samples":)" +
             std::to_string(step * 64) + R"(,"tokens":)" + std::to_string(step * 64 * 4096) +
             R"(,"cpu_s":412.57,"attempt":0,"run_id":"bench-scale","node_rank":)" + std::to_string(n) +
             R"(,"nonfinite_total":0,"loss":2.10421,"loss_scale":65536.0,"grad_norm":1.1,)"
             R"("checkpoint":{"state":"ok","step":800,"begin_age_ms":712000,"duration_ms":20000,)"
             R"("last_ok_step":800,"last_ok_age_ms":692000}})";
  }
  std::string gpus;
  for (int i = 0; i < 8; ++i) {
    gpus += std::string(gpus.empty() ? "" : ",") + R"({"index":)" + std::to_string(i) +
            R"(,"name":"NVIDIA H100 80GB HBM3","lost":false,"memory_used_bytes":6100000000)" +
            std::to_string(i) +
            R"(,"memory_total_bytes":85520809984,"ecc_uncorrected":0,"last_xid":0,"last_xid_critical":false,)"
            R"("xid_count":0})";
  }
  return R"({"schema":1,"job":"llama-16k","node":"node-)" + std::to_string(n) +
         R"(","seq":42,"final":false,)" + R"("agent_pid":)" + std::to_string(100'000 + n) +
         R"(,"report_every_ms":5000,"ranks":[)" + ranks + R"(],"gpus":[)" + gpus +
         R"(],"disks":[{"name":"ckpt","path":"/ckpt","ok":true,"error":"","free_bytes":9000000000000,)"
         R"("total_bytes":15000000000000}],"memory":{"available_bytes":1500000000000,"total_bytes":2000000000000}})";
}

void parse_a_node_report(benchmark::State& state) {
  const std::string body = report_body(1'234, 2'302);
  for (auto _ : state) {
    auto report = parse_node_report(body);
    if (!report) state.SkipWithError(report.error().message.c_str());
    benchmark::DoNotOptimize(report);
  }
  state.counters["bytes"] = static_cast<double>(body.size());
}
BENCHMARK(parse_a_node_report)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace trainwatch::jobs

BENCHMARK_MAIN();
