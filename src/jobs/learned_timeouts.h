// Timeouts a job learns from what it does (docs/failure-modes.md, "Timeouts that do not cry wolf").
//
// Step: the longest gap between two steps that the agents saw in a report window, taken
// after warm-up and outside checkpoints, smoothed so that it rises at once and decays
// slowly: a single long step raises the timeout immediately, a run of short ones lowers
// it by kDecay of the difference per observation. timeout = max(floor, 5 x smoothed).
//   observe(400ms): smoothed 400 -> timeout max(60s, 2s) = 60s
//   observe(30s):   smoothed 30s -> timeout 150s
//   observe(400ms): smoothed 30s - 0.05 x 29.6s = 28.5s -> timeout 142.6s
// Checkpoint: the longest checkpoint seen; timeout = max(floor, 5 x longest). Evaluation
// (declared: status evaluating, or the phase "eval") likewise, with the checkpoint's floor.
// A fixed timeout from config always wins.
#pragma once

#include <optional>

#include "config/config.h"
#include "core/clock.h"

namespace trainwatch::jobs {

inline constexpr double kTimeoutFactor = 5.0;  // NVIDIA's resiliency tools use 5
inline constexpr double kDecay = 0.05;         // share of the gap closed per lower observation

class LearnedTimeouts {
 public:
  void observe_step_gap(Millis gap);
  void observe_checkpoint(Millis duration);
  // How long a declared evaluation lasted (job_state.h).
  void observe_evaluation(Millis duration);

  std::optional<Millis> smoothed_step_gap() const { return step_gap_; }

  // The timeout in force and whether it was learned (false: fixed in config or the floor
  // because nothing was observed yet).
  struct Timeout {
    Millis value{0};
    bool learned = false;
  };
  Timeout step_timeout(const JobThresholds& t) const;
  Timeout checkpoint_timeout(const JobThresholds& t) const;
  // A declared evaluation: max(checkpoint_timeout_min, 5 x the longest seen), like a
  // checkpoint, a pause the job makes on purpose; a fixed checkpoint_timeout does not bind it.
  Timeout evaluation_timeout(const JobThresholds& t) const;

 private:
  std::optional<Millis> step_gap_;
  std::optional<Millis> longest_checkpoint_;
  std::optional<Millis> longest_evaluation_;
};

}  // namespace trainwatch::jobs
