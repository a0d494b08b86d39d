#include "agent/push_plan.h"

#include <algorithm>

namespace trainwatch::agent {
namespace {

// What, when it changes, is worth telling the server before the next scheduled report.
// A stack just captured is: it is where an overdue rank is, which the server's early
// culprit warning (jobs/analysis.h) needs seconds after the last step, not a report later.
std::string fingerprint(const NodeSnapshot& node) {
  std::string f;
  for (const auto& r : node.ranks) {
    f += std::to_string(r.slot.rank) + ':' + std::to_string(r.slot.status) + (r.alive ? 'a' : 'g') + r.state +
         (r.slot.error.empty() ? '-' : 'e') + (r.stack ? 's' : '-') + ';';
  }
  return f;
}

}  // namespace

bool PushPlan::note(const NodeSnapshot& node) {
  const MonoTime before = due();
  std::string f = fingerprint(node);
  // A node's first ranks are not a change: they wait for the scheduled report.
  if (!fingerprint_.empty() && f != fingerprint_) changed_ = true;
  fingerprint_ = std::move(f);

  std::map<uint64_t, uint64_t> totals;
  for (const auto& r : node.ranks) {
    if (!r.slot.has_nonfinite) continue;
    auto it = nonfinite_totals_.find(r.slot.owner);
    // A rank first seen after the agent's first sample with non-finite losses already
    // counted (a process that started and went bad between two samples) is news too.
    const uint64_t previous = it != nonfinite_totals_.end() ? it->second
                              : noted_once_                 ? 0
                                                            : r.slot.nonfinite_total;
    if (r.slot.nonfinite_total > previous) nonfinite_ = true;
    totals.emplace(r.slot.owner, r.slot.nonfinite_total);
  }
  nonfinite_totals_ = std::move(totals);
  noted_once_ = true;
  return due() < before;
}

MonoTime PushPlan::due() const {
  MonoTime d = next_due_;
  if (changed_) d = std::min(d, last_sent_ + kMinPushGap);
  if (nonfinite_) d = std::min(d, last_sent_ + kNonfinitePushGap);
  return d;
}

void PushPlan::sent(MonoTime at) {
  changed_ = false;
  nonfinite_ = false;
  last_sent_ = at;
  next_due_ = at + report_every_;
}

}  // namespace trainwatch::agent
