#include "cluster/store_follower.h"

#include <utility>

#include <spdlog/spdlog.h>

namespace trainwatch::cluster {

StoreFollower::StoreFollower(const Clock& clock, const ReplicaSet& replicas, const jobs::JobPeers& peers,
                             Followed followed)
    : clock_(clock), replicas_(replicas), peers_(peers), followed_(std::move(followed)) {}

void StoreFollower::follow() {
  follow_catalog();
  followed_.sync_ownership();
  followed_.wake_outbox();
  if (auto followed = followed_.node_reports(); !followed) {
    if (auto events = log_.admit(clock_.monotonic_time())) {
      spdlog::warn("replicas: cannot read the node reports ({} time(s) since the last report): {}", *events,
                   followed.error().message);
    }
  }
  followed_.keep_jobs([this](const std::string& job) { return replicas_.owns(job); },
                      [this](const std::string& job) { return peers_.holding(job).here; });
  followed_.analyse_standby([this](const std::string& job) {
    const auto holding = replicas_.holding(job);
    return holding.standby_here && !holding.owner_here;
  });
}

// Channels, monitors, maintenance windows: one that fails skips the next (see the top of
// the header); one skipped does not.
void StoreFollower::follow_catalog() {
  auto channels = followed_.channels();
  auto monitors = channels ? followed_.monitors() : Result<bool>(false);
  auto windows = monitors ? followed_.maintenance() : Result<bool>(false);
  if (channels && monitors && windows) return;
  if (auto events = log_.admit(clock_.monotonic_time())) {
    const Error& error = (!channels ? channels : !monitors ? monitors : windows).error();
    spdlog::warn(
        "replicas: cannot read the API channels, monitors and maintenance windows ({} time(s) since the last "
        "report): {}",
        *events, error.message);
  }
}

}  // namespace trainwatch::cluster
