#include "cluster/replica_set.h"

#include <algorithm>
#include <cstdlib>

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include "cluster/membership.h"
#include "storage/store_errors.h"

namespace trainwatch::cluster {

ReplicaSet::ReplicaSet(MemberRegistry& registry, DatabaseClock& clock, std::string id, std::string label)
    : registry_(registry),
      clock_(clock),
      id_(std::move(id)),
      label_(std::move(label)),
      members_(std::make_shared<const std::vector<std::string>>()) {}

ReplicaSet::~ReplicaSet() { stop(); }

Status ReplicaSet::start(OnBeat on_beat, OnNudge on_nudge) {
  on_beat_ = std::move(on_beat);
  on_nudge_ = std::move(on_nudge);
  Beat first = beat();
  if (first.error) return make_error(store_error::kUnavailable, *first.error);
  spdlog::info("replicas: {} joined as {}; {} member(s) own monitors now", label_, id_, members().size());
  thread_ = std::thread([this] { run(); });
  return Ok{};
}

void ReplicaSet::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (Status left = registry_.leave(id_); !left) {
    spdlog::warn("replicas: could not leave the members table ({}); the others take over after {} s",
                 left.error().message, kMemberTtl.count() / 1000);
  }
}

void ReplicaSet::set_config(std::string fingerprint) {
  std::lock_guard lock(mu_);
  config_ = std::move(fingerprint);
}

void ReplicaSet::set_address(std::string address) {
  std::lock_guard lock(mu_);
  address_ = std::move(address);
}

ReplicaSet::Beat ReplicaSet::beat() {
  MemberRow self{id_, label_, {}, {}, {}, {}};
  // Taken before the round trip: the database stamps the row later than this, so the
  // lease ends before the others can see the row expire.
  const MonoTime started = clock_.monotonic_time();
  bool lapsed = false;
  bool standing_up = false;
  {
    std::lock_guard lock(mu_);
    self.config = config_;
    self.address = address_;
    self.fit = fitness_.fit;
    lapsed = joined_ && !lease_valid(beat_started_, started);
    standing_up = stand_up_pending_;  // membership.h, Fitness: it settles again, as a newcomer
    beating_since_ = started;
  }
  auto reply = registry_.beat(self, lapsed || standing_up);
  const MonoTime now = clock_.monotonic_time();
  Beat outcome;
  if (reply) {
    clock_.observe(reply->database_now, now, reply->uncertainty);
    warn_of_wall_clock(now);
    warn_of_other_configs(reply->members, self.config, now);
    if (lapsed)
      spdlog::warn("replicas: {} re-joined as new after its lease lapsed; it owns nothing until it settles",
                   label_);
  } else {
    outcome.error = reply.error().message;
  }
  std::lock_guard lock(mu_);
  beating_since_.reset();
  const bool was_acting = acting_;
  beat_error_ = outcome.error;
  std::vector<std::string> eligible;
  if (reply) {
    beat_started_ = started;
    joined_ = true;
    addresses_.clear();
    for (const MemberRow& row : reply->members) addresses_[row.id] = row.address;
    if (lapsed) {
      ++term_;
      acting_ = false;
    }
    if (standing_up) stand_up_pending_ = false;
    eligible = eligible_after(started, now, *reply);
    const bool eligible_here = std::binary_search(eligible.begin(), eligible.end(), id_);
    if (!eligible_here) acting_ = false;
    if (!acting_ && eligible_here && handed_over(reply->members, id_)) acting_ = true;
  } else if (lease_valid(beat_started_, now)) {
    eligible = *members_;  // they keep their monitors while the lease lasts
  }
  outcome.changed = eligible != *members_ || acting_ != was_acting;
  if (outcome.changed) members_ = std::make_shared<const std::vector<std::string>>(std::move(eligible));
  return outcome;
}

// Call with mu_ held, after a successful beat: notes how long it took (membership.h,
// Fitness), saying when this replica stands down or up, and returns the eligible members
// as the others will see them once its next beat wrote what it now knows of itself (it
// stops acting at once when it stands down; it waits to settle when it stands up).
std::vector<std::string> ReplicaSet::eligible_after(MonoTime started, MonoTime now, const BeatReply& reply) {
  const bool was_fit = fitness_.fit;
  note_beat(fitness_, started, now);
  last_beat_took_ = std::chrono::duration_cast<Millis>(now - started);
  if (was_fit && !fitness_.fit) {
    spdlog::warn(
        "replicas: {} stands down: its beat took {} ms; the others check its monitors until its beats take "
        "under {} ms for {} s",
        label_, last_beat_took_.count(), (kSlowBeat / 2).count(), kFitAfter.count() / 1000);
  } else if (!was_fit && fitness_.fit) {
    stand_up_pending_ = true;
    spdlog::info(
        "replicas: {} stands up again: its beats took under {} ms for {} s; it settles as a newcomer", label_,
        (kSlowBeat / 2).count(), kFitAfter.count() / 1000);
  }
  std::vector<MemberRow> rows = reply.members;
  for (MemberRow& row : rows) {
    if (row.id == id_) row.fit = fitness_.fit && !stand_up_pending_;
  }
  return eligible_members(rows);
}

std::optional<std::string> ReplicaSet::standing_down() const {
  std::lock_guard lock(mu_);
  if (fitness_.fit) return std::nullopt;
  return fmt::format("its last beat took {} ms; it stands up once its beats take under {} ms for {} s",
                     last_beat_took_.count(), (kSlowBeat / 2).count(), kFitAfter.count() / 1000);
}

// Not an error that stops anything: a rolling reload passes through it. Said once a
// minute while it lasts, so that two installations on one database by mistake are heard.
void ReplicaSet::warn_of_other_configs(const std::vector<MemberRow>& rows, const std::string& mine,
                                       MonoTime now) {
  const auto others = other_configs(rows, mine);
  if (others.empty()) return;
  if (!config_log_.admit(now)) return;
  std::string who;
  for (const MemberRow* row : others) {
    who += (who.empty() ? "" : ", ") + row->label + " (" + row->id + ", monitors " + row->config + ")";
  }
  spdlog::warn(
      "replicas: {} run(s) other monitors than this one ({}, monitors {}): a monitor that one of them lacks "
      "may be owned by it and checked by nobody; give every replica on this database the same config file",
      who, label_, mine);
}

// Nothing this replica stamps is off (it keeps the database's time), but a host whose
// clock is wrong misleads whoever reads its other logs: said once a minute while it lasts.
void ReplicaSet::warn_of_wall_clock(MonoTime now) {
  const Millis ahead = clock_.wall_clock_ahead();
  if (ahead < kWallClockTolerance && -ahead < kWallClockTolerance) return;
  if (!wall_clock_log_.admit(now)) return;
  spdlog::warn(
      "replicas: this host's wall clock is {:.1f} s {} the database's; {} keeps the database's time for all "
      "it stamps, but check the host's time service (NTP)",
      static_cast<double>(std::abs(ahead.count())) / 1000.0, ahead.count() > 0 ? "ahead of" : "behind",
      label_);
}

void ReplicaSet::run() {
  using std::chrono::steady_clock;
  auto next_beat = steady_clock::now() + kBeatEvery;
  std::unique_lock lock(mu_);
  while (!stopping_) {
    const auto now = steady_clock::now();
    if (now < next_beat) {
      // In slices, so that stop() is heard within one.
      const auto slice = std::min(std::chrono::duration_cast<Millis>(next_beat - now), kNudgeSlice);
      lock.unlock();
      auto nudges = registry_.await_nudges(slice);
      if (nudges) {
        for (const auto& monitor : *nudges) {
          if (owns(monitor)) on_nudge_(monitor);
        }
      }
      lock.lock();
      // Not connected: the next beat connects; until then, wait as a sleep would.
      if (!nudges) wake_.wait_for(lock, slice, [this] { return stopping_; });
      continue;
    }
    next_beat = now + kBeatEvery;
    lock.unlock();
    const Beat beaten = beat();
    if (beaten.changed) spdlog::info("replicas: {} member(s) own monitors now", members().size());
    if (beaten.error) {
      if (auto events = failure_log_.admit(clock_.monotonic_time())) {
        spdlog::warn("replicas: beat failed ({} since the last report): {}", *events, *beaten.error);
      }
    }
    // After a failed beat only a change matters (owning nothing any more): the stored
    // states cannot be read either.
    if (!beaten.error || beaten.changed) on_beat_(beaten.changed);
    lock.lock();
  }
}

std::optional<std::string> ReplicaSet::trouble() const {
  std::lock_guard lock(mu_);
  const MonoTime now = clock_.monotonic_time();
  if (lease_valid(beat_started_, now)) return std::nullopt;
  // A beat that never returns (its packets dropped: nothing fails, nothing answers) is as
  // much trouble as one that failed.
  if (beating_since_ && now - *beating_since_ >= kLease) {
    return fmt::format(
        "its beat has waited {:.1f} s for the database, with no answer",
        static_cast<double>(std::chrono::duration_cast<Millis>(now - *beating_since_).count()) / 1000.0);
  }
  return beat_error_;
}

bool ReplicaSet::owns(std::string_view monitor) const {
  std::shared_ptr<const std::vector<std::string>> members;
  {
    std::lock_guard lock(mu_);
    if (!acting_ || !lease_valid(beat_started_, clock_.monotonic_time())) return false;
    members = members_;
  }
  return owner_of(monitor, *members) == id_;
}

ReplicaSet::Holding ReplicaSet::holding(std::string_view key) const {
  std::lock_guard lock(mu_);
  const bool acting = acting_ && lease_valid(beat_started_, clock_.monotonic_time());
  const Holders holders = holders_of(key, *members_);
  auto address_of = [&](std::string_view id) -> std::string {
    if (id.empty() || id == id_) return "";
    auto it = addresses_.find(std::string(id));
    return it == addresses_.end() ? "" : it->second;
  };
  Holding h;
  h.owner_here = acting && holders.owner == id_;
  h.standby_here = acting && holders.standby == id_;
  h.owner_address = address_of(holders.owner);
  h.standby_address = address_of(holders.standby);
  return h;
}

std::vector<std::string> ReplicaSet::other_addresses() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const std::string& id : *members_) {
    auto it = addresses_.find(id);
    if (id != id_ && it != addresses_.end() && !it->second.empty()) out.push_back(it->second);
  }
  return out;
}

uint64_t ReplicaSet::term() const {
  std::lock_guard lock(mu_);
  return term_;
}

std::vector<std::string> ReplicaSet::members() const {
  std::lock_guard lock(mu_);
  return *members_;
}

}  // namespace trainwatch::cluster
