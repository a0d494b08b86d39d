// Counters the engine keeps for /metrics: checks per monitor and result, and a histogram
// of check durations per monitor type. Plain values; copied out under the engine's lock.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>

namespace trainwatch::engine {

struct DurationHistogram {
  static constexpr std::array<double, 11> kBoundsSeconds = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                            0.5,   1.0,  2.5,   5.0,  10.0};
  std::array<uint64_t, kBoundsSeconds.size()> cumulative{};
  uint64_t count = 0;
  double sum_seconds = 0;

  void observe(double seconds) {
    for (size_t i = 0; i < kBoundsSeconds.size(); ++i) {
      if (seconds <= kBoundsSeconds[i]) ++cumulative[i];
    }
    ++count;
    sum_seconds += seconds;
  }
};

struct CheckCounts {
  uint64_t success = 0;
  uint64_t failure = 0;
};

struct CheckMetrics {
  std::map<std::string, CheckCounts> by_monitor;
  std::map<std::string, DurationHistogram> duration_by_type;
};

}  // namespace trainwatch::engine
