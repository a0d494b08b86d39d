#include "jobs/learned_timeouts.h"

#include <algorithm>

namespace trainwatch::jobs {
namespace {

Millis scaled(Millis m, double factor) {
  return Millis(static_cast<int64_t>(static_cast<double>(m.count()) * factor));
}

}  // namespace

void LearnedTimeouts::observe_step_gap(Millis gap) {
  if (!step_gap_ || gap >= *step_gap_) {
    step_gap_ = gap;
    return;
  }
  step_gap_ = *step_gap_ - scaled(*step_gap_ - gap, kDecay);
}

void LearnedTimeouts::observe_checkpoint(Millis duration) {
  longest_checkpoint_ = std::max(longest_checkpoint_.value_or(Millis{0}), duration);
}

void LearnedTimeouts::observe_evaluation(Millis duration) {
  longest_evaluation_ = std::max(longest_evaluation_.value_or(Millis{0}), duration);
}

LearnedTimeouts::Timeout LearnedTimeouts::evaluation_timeout(const JobThresholds& t) const {
  if (!longest_evaluation_) return {t.checkpoint_timeout_min, false};
  Millis learned = scaled(*longest_evaluation_, kTimeoutFactor);
  return {std::max(t.checkpoint_timeout_min, learned), learned > t.checkpoint_timeout_min};
}

LearnedTimeouts::Timeout LearnedTimeouts::step_timeout(const JobThresholds& t) const {
  if (t.step_timeout) return {*t.step_timeout, false};
  if (!step_gap_) return {t.step_timeout_min, false};
  Millis learned = scaled(*step_gap_, kTimeoutFactor);
  return {std::max(t.step_timeout_min, learned), learned > t.step_timeout_min};
}

LearnedTimeouts::Timeout LearnedTimeouts::checkpoint_timeout(const JobThresholds& t) const {
  if (t.checkpoint_timeout) return {*t.checkpoint_timeout, false};
  if (!longest_checkpoint_) return {t.checkpoint_timeout_min, false};
  Millis learned = scaled(*longest_checkpoint_, kTimeoutFactor);
  return {std::max(t.checkpoint_timeout_min, learned), learned > t.checkpoint_timeout_min};
}

}  // namespace trainwatch::jobs
