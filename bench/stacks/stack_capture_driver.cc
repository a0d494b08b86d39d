// Captures one rank's Python stack `count` times through the agent's code (capture_stacks),
// `gap_ms` apart, and prints one line per capture for bench_stacks.py:
//   <start ns> <end ns> <frames parsed in the first thread> <truncated 0|1> <note>
// Times are CLOCK_MONOTONIC, the clock of Python's time.perf_counter_ns() on Linux.
//   stack_capture_driver STACK_FILE PID COUNT GAP_MS
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "agent/stack_capture.h"

namespace {

long long monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s STACK_FILE PID COUNT GAP_MS\n", argv[0]);
    return 2;
  }
  struct stat st {};
  if (stat(argv[1], &st) != 0) {
    std::perror(argv[1]);
    return 1;
  }
  const trainwatch::agent::StackTarget target{std::atoi(argv[2]), st.st_uid, argv[1]};
  const int count = std::atoi(argv[3]);
  const useconds_t gap_us = static_cast<useconds_t>(std::atoi(argv[4])) * 1000;
  for (int i = 0; i < count; ++i) {
    const long long start = monotonic_ns();
    const auto captures = trainwatch::agent::capture_stacks({target}, "/proc");
    const long long end = monotonic_ns();
    const auto& c = captures.front();
    const size_t frames = c.stack && !c.stack->threads.empty() ? c.stack->threads.front().frames.size() : 0;
    std::printf("%lld %lld %zu %d %s\n", start, end, frames, c.stack && c.stack->truncated ? 1 : 0,
                c.note.empty() ? "-" : c.note.c_str());
    usleep(gap_us);
  }
  return 0;
}
