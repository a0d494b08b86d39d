#include "agent/rank_samples.h"

#include <algorithm>

namespace trainwatch::agent {

void CollectiveTime::sample(bool marks_collectives, bool inside, int64_t now_ms) {
  if (!marks_collectives) return;
  if (!known_) {
    known_ = true;
    last_ms_ = now_ms;
    return;
  }
  const int64_t dt = std::clamp<int64_t>(now_ms - last_ms_, 0, kMaxGapMs);
  last_ms_ = now_ms;
  sampled_ms_ += dt;
  if (inside) wait_ms_ += dt;
}

void OomBaseline::alive(std::optional<uint64_t> host, std::optional<uint64_t> cgroup) {
  host_before_ = host_last_ ? host_last_ : host;
  cgroup_before_ = cgroup_last_ ? cgroup_last_ : cgroup;
  host_last_ = host;
  cgroup_last_ = cgroup;
}

bool OomBaseline::rose(std::optional<uint64_t> host_now, std::optional<uint64_t> cgroup_now) const {
  if (cgroup_now && cgroup_before_ && *cgroup_now > *cgroup_before_) return true;
  return host_now && host_before_ && *host_now > *host_before_;
}

}  // namespace trainwatch::agent
