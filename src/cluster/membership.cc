#include "cluster/membership.h"

#include <algorithm>

#include <spdlog/fmt/fmt.h>

namespace trainwatch::cluster {
namespace {

// FNV-1a, 64-bit: spreads names well enough once mixed below, and is defined by its
// constants alone (std::hash is neither stable across builds nor across platforms).
uint64_t fnv1a(std::string_view text, uint64_t hash = 0xcbf29ce484222325ULL) {
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

// splitmix64's finalizer: every input bit moves every output bit.
uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

}  // namespace

std::vector<std::string> eligible_members(const std::vector<MemberRow>& rows) {
  std::vector<const MemberRow*> live;
  for (const auto& row : rows) {
    if (row.seen_age <= kMemberTtl) live.push_back(&row);
  }
  std::vector<std::string> eligible;
  for (const MemberRow* row : live) {
    if (row->joined_age >= kSettle && row->fit) eligible.push_back(row->id);
  }
  // Every settled member stands down (the database itself is slow): they act all the same.
  if (eligible.empty()) {
    for (const MemberRow* row : live) {
      if (row->joined_age >= kSettle) eligible.push_back(row->id);
    }
  }
  // None settled (replicas started together, or the first alone): the eldest owns all
  // until the others settle, rather than nobody. Ties go to the smaller id, so every
  // replica picks the same one.
  if (eligible.empty() && !live.empty()) {
    const MemberRow* eldest =
        *std::min_element(live.begin(), live.end(), [](const MemberRow* a, const MemberRow* b) {
          return a->joined_age != b->joined_age ? a->joined_age > b->joined_age : a->id < b->id;
        });
    eligible.push_back(eldest->id);
  }
  std::sort(eligible.begin(), eligible.end());
  return eligible;
}

bool handed_over(const std::vector<MemberRow>& rows, const std::string& self) {
  auto mine = std::find_if(rows.begin(), rows.end(), [&](const MemberRow& r) { return r.id == self; });
  if (mine == rows.end()) return false;
  if (mine->joined_age < kSettle) return true;  // the eldest of the unsettled: see the header
  const Millis eligible_for = mine->joined_age - kSettle;
  return std::all_of(rows.begin(), rows.end(), [&](const MemberRow& r) {
    return r.id == self || r.seen_age > kMemberTtl || r.seen_age <= eligible_for;
  });
}

void note_beat(Fitness& f, MonoTime started, MonoTime now) {
  const Millis took = std::chrono::duration_cast<Millis>(now - started);
  if (took > kSlowBeat) {
    f.fit = false;
    f.quick_since.reset();
    return;
  }
  if (f.fit) return;
  if (took >= kSlowBeat / 2) {
    f.quick_since.reset();
    return;
  }
  if (!f.quick_since) f.quick_since = started;
  if (now - *f.quick_since >= kFitAfter) {
    f.fit = true;
    f.quick_since.reset();
  }
}

std::string config_fingerprint(const Config& config) {
  std::vector<std::string_view> names;
  names.reserve(config.monitors.size());
  for (const auto& m : config.monitors) names.push_back(m.name);
  std::sort(names.begin(), names.end());
  uint64_t hash = fnv1a("");
  for (std::string_view name : names) {
    hash = fnv1a(name, hash);
    hash = fnv1a(std::string_view("\0", 1), hash);  // "ab","c" is not "a","bc"
  }
  return fmt::format("{:016x}", mix(hash));
}

std::vector<const MemberRow*> other_configs(const std::vector<MemberRow>& rows, const std::string& mine) {
  std::vector<const MemberRow*> others;
  for (const auto& row : rows) {
    if (row.seen_age <= kMemberTtl && row.config != mine) others.push_back(&row);
  }
  return others;
}

uint64_t rendezvous_weight(std::string_view key, std::string_view member) {
  return mix(fnv1a(key) ^ mix(fnv1a(member)));
}

std::string_view owner_of(std::string_view key, const std::vector<std::string>& members) {
  return holders_of(key, members).owner;
}

Holders holders_of(std::string_view key, const std::vector<std::string>& members) {
  struct Ranked {
    std::string_view id;
    uint64_t weight = 0;
    // Ties (never seen in practice) go to the smaller id, so every replica breaks them alike.
    bool above(const Ranked& o) const {
      return o.id.empty() || weight > o.weight || (weight == o.weight && id < o.id);
    }
  };
  Ranked first, second;
  for (const auto& m : members) {
    const Ranked r{m, rendezvous_weight(key, m)};
    if (r.above(first)) {
      second = first;
      first = r;
    } else if (r.above(second)) {
      second = r;
    }
  }
  return {first.id, second.id};
}

}  // namespace trainwatch::cluster
