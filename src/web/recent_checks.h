// A monitor's recent checks as the monitor list draws them: a bar of beats, one a check
// (or a ping, or a job verdict), coloured by result with a word for screen readers, and a
// latency sparkline from the first check on. Pure: stored rows in, markup out; every text
// placed in markup goes through html_escape.
//
// Beats, oldest first: "ok" (green), "failed" (red), "start" (a heartbeat run began:
// neutral). A heartbeat's beats are its pings (a log ping is left out) and its missed
// deadlines (failed results no ping explains).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/model.h"
#include "core/ping.h"

namespace trainwatch::web {

enum class BeatKind { kOk, kFailed, kStart };

struct Beat {
  int64_t at_ms = 0;
  BeatKind kind = BeatKind::kOk;
  double latency_ms = 0;
};

// The newest `n` of `newest_first` results, oldest first.
std::vector<Beat> beats_from_results(std::span<const CheckResult> newest_first, size_t n);

// The newest `n` of a heartbeat's pings and its missed deadlines, oldest first.
std::vector<Beat> beats_from_pings(std::span<const PingRecord> pings_newest_first,
                                   std::span<const CheckResult> results_newest_first, size_t n);

// <span class="beats" role="img" aria-label="…"><i class="b-ok"></i>…</span>; `slots`
// beats wide: the missing ones, before the first check, are drawn empty ("b-none").
std::string beats_html(std::span<const Beat> beats, size_t slots);

struct Sparkline {
  std::string path;   // SVG path data in a 120 x 24 box; "" without a latency
  std::string label;  // "latency of the last 30 checks: 12 ms to 40 ms, last 23 ms"
};

// "0.4 ms", "23 ms", "1.2 s", "12 s".
std::string latency_text(double ms);

// Latencies of the checks that passed, evenly spaced; one check draws a short level line.
Sparkline sparkline(std::span<const Beat> beats);

}  // namespace trainwatch::web
