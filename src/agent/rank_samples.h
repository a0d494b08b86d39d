// What the sampler adds up about one rank from sample to sample, beside its steps (agent.cc's
// Track): the time it was seen in a collective against the time sampled, and the OOM-kill
// counts read while it lived (oom_watch.h says why two samples back). Pure: the sampler
// feeds it each sample's reading and its own clock.
#pragma once

#include <cstdint>
#include <optional>

namespace trainwatch::agent {

// Sampled time in collectives. Each sample finds the rank inside one or not, and counts the
// time since the previous sample that way; samples are spaced at random (agent.cc) so they
// never keep step with a rank's steps. Starts at the first sample that sees a collective
// marked; a gap longer than kMaxGapMs (a stopped agent, a suspended host) counts as one
// sample interval, not as time in or out.
class CollectiveTime {
 public:
  static constexpr int64_t kMaxGapMs = 2'000;
  void sample(bool marks_collectives, bool inside, int64_t now_ms);
  bool known() const { return known_; }
  int64_t wait_ms() const { return wait_ms_; }
  int64_t sampled_ms() const { return sampled_ms_; }

 private:
  bool known_ = false;
  int64_t last_ms_ = 0, wait_ms_ = 0, sampled_ms_ = 0;
};

// The OOM-kill counts (the host's, the rank's cgroup's) at the last two samples that saw
// the rank alive.
class OomBaseline {
 public:
  void alive(std::optional<uint64_t> host, std::optional<uint64_t> cgroup);
  // Whether a count rose since two samples before the last that saw the rank alive.
  bool rose(std::optional<uint64_t> host_now, std::optional<uint64_t> cgroup_now) const;

 private:
  std::optional<uint64_t> host_before_, host_last_, cgroup_before_, cgroup_last_;
};

}  // namespace trainwatch::agent
