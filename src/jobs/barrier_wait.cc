#include "jobs/barrier_wait.h"

#include <algorithm>
#include <optional>
#include <string>

#include "jobs/rank_place.h"

namespace trainwatch::jobs {
namespace {

enum class Where { kUnknown, kBarrier, kOtherCollective, kOutside };

bool is_barrier_kind(const std::string& kind) { return kind == "barrier" || kind == "monitored_barrier"; }

Where where(const RankReport& r) {
  if (r.stack) {
    if (auto place = place_of(r); place && place->kind != RankPlace::Kind::kUnknown) {
      if (place->kind == RankPlace::Kind::kElsewhere) return Where::kOutside;
      return is_barrier(*place) ? Where::kBarrier : Where::kOtherCollective;
    }
  }
  if (!r.collective || r.collective->count == 0) return Where::kUnknown;
  if (!r.collective->inside) return Where::kOutside;
  return is_barrier_kind(r.collective->kind) ? Where::kBarrier : Where::kOtherCollective;
}

// The collectives the rank has entered, when its marks say.
std::optional<uint64_t> entered(const RankReport& r) {
  if (!r.collective || r.collective->count == 0) return std::nullopt;
  return r.collective->count;
}

}  // namespace

bool paused_at_barrier(const std::vector<std::pair<int, const RankReport*>>& ranks) {
  size_t in_barrier = 0, outside = 0;
  std::optional<uint64_t> barrier_count;  // the count the barrier's ranks share, when marked
  std::optional<uint64_t> outside_most;   // the most any rank outside has entered
  for (const auto& [rank, r] : ranks) {
    switch (where(*r)) {
      case Where::kUnknown:
      case Where::kOtherCollective: return false;
      case Where::kBarrier:
        ++in_barrier;
        if (auto n = entered(*r)) {
          if (barrier_count && *barrier_count != *n) return false;  // not one barrier
          barrier_count = n;
        }
        break;
      case Where::kOutside:
        ++outside;
        if (auto n = entered(*r)) outside_most = std::max(outside_most.value_or(0), *n);
        break;
    }
  }
  if (barrier_count && outside_most && *outside_most >= *barrier_count) return false;
  return in_barrier > 0 && outside > 0;
}

bool waits_in_barrier(const RankReport& before, const RankReport& now) {
  auto in_barrier = [](const RankReport& r) {
    return r.collective && r.collective->count > 0 && r.collective->inside &&
           is_barrier_kind(r.collective->kind);
  };
  return before.pid == now.pid && in_barrier(before) && in_barrier(now) &&
         before.collective->count == now.collective->count && before.step_reports == now.step_reports;
}

}  // namespace trainwatch::jobs
