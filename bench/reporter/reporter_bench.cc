// Per-step report cost of libtrainwatch (target: <= 20 ns), through the exported C
// ABI of libtrainwatch.so so the figure includes the PLT call a user pays. The slot lives
// in a private directory under /dev/shm (tmpfs, like the default TRAINWATCH_DIR).
//
// Run: build-agent-rel/bench/reporter/reporter_bench   (bench/reporter/run.py adds the seed)
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <unistd.h>

#include "trainwatch/trainwatch.hpp"

namespace {

// One slot directory for the whole run, removed at exit.
class SlotDir {
 public:
  SlotDir() {
    std::string base =
        std::filesystem::exists("/dev/shm") ? "/dev/shm" : std::filesystem::temp_directory_path().string();
    path_ = base + "/trainwatch-bench-" + std::to_string(::getpid());
    std::filesystem::create_directories(path_);
  }
  ~SlotDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

SlotDir& slot_dir() {
  static SlotDir dir;
  return dir;
}

tw_options bench_options() {
  tw_options o{};
  o.struct_size = sizeof o;
  o.job = "bench";
  o.dir = slot_dir().path().c_str();
  o.rank_set = o.local_rank_set = o.world_size_set = 1;
  o.world_size = 1;
  return o;
}

// The common case: step number and loss.
void BM_Step(benchmark::State& state) {
  trainwatch::Reporter reporter(bench_options());
  if (!reporter.enabled()) {
    state.SkipWithError(tw_last_error());
    return;
  }
  reporter.status(TW_STATUS_TRAINING);
  int64_t step = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(reporter.step(++step, 0.5));
  }
}
BENCHMARK(BM_Step);

// Every per-step field: loss, loss scale, overflow, grad norm, samples, tokens.
void BM_StepEx(benchmark::State& state) {
  trainwatch::Reporter reporter(bench_options());
  if (!reporter.enabled()) {
    state.SkipWithError(tw_last_error());
    return;
  }
  reporter.status(TW_STATUS_TRAINING);
  tw_step_info info{};
  info.struct_size = sizeof info;
  info.fields = TW_FIELD_LOSS | TW_FIELD_LOSS_SCALE | TW_FIELD_OVERFLOW | TW_FIELD_GRAD_NORM |
                TW_FIELD_SAMPLES | TW_FIELD_TOKENS;
  info.loss_scale = 65536;
  info.grad_norm = 1.5;
  info.samples = 32;
  info.tokens = 32 * 2048;
  for (auto _ : state) {
    ++info.step;
    info.loss = 1.0 / static_cast<double>(info.step);
    info.overflow = (info.step % 1000) == 0;
    benchmark::DoNotOptimize(reporter.step(info));
  }
}
BENCHMARK(BM_StepEx);

// A failed open gives a no-op handle: what a rank pays when monitoring is off.
void BM_StepDisabled(benchmark::State& state) {
  tw_options o = bench_options();
  o.rank = 3;  // rank >= world size: the documented bad-input path
  trainwatch::Reporter reporter(o);
  int64_t step = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(reporter.step(++step, 0.5));
  }
}
BENCHMARK(BM_StepDisabled);

}  // namespace

BENCHMARK_MAIN();
