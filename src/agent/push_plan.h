// PushPlan: when the agent's next node report is due. Pure: the sampler's snapshots and
// instants of the monotonic clock in, an instant out. ReportPusher's thread sleeps until
// due() and calls sent() after each report; offer() calls note() with every sample.
//
// A report is due report_every after the last one, and sooner when the node has news:
//   - a rank's status, liveness, process state or error changed, or its stack was captured
//     (its step is overdue): kMinPushGap after the last report (at once when that is past);
//   - a rank's count of non-finite losses rose: kNonfinitePushGap after the last report.
// The gaps are the bound: a rank whose loss is NaN at every step, sampled every 200 ms,
// brings the report forward at every sample, yet no more than one report leaves per
// kNonfinitePushGap. Example, report_every 5 s, last report at t=0: a NaN first seen at
// t=1.2 s makes the report due at once (1.2 s > 250 ms); the rise seen at t=1.4 s makes
// the next one due at 1.45 s, not at 6.2 s.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "agent/node_snapshot.h"
#include "core/clock.h"

namespace trainwatch::agent {

inline constexpr Millis kMinPushGap{200};
inline constexpr Millis kNonfinitePushGap{250};

class PushPlan {
 public:
  // The first report is due at `start`.
  PushPlan(Millis report_every, MonoTime start) : report_every_(report_every), next_due_(start) {}

  // Takes the sampler's latest snapshot; true when it brought the next report forward.
  bool note(const NodeSnapshot& node);
  MonoTime due() const;
  // A report went (or was attempted) at `at`: the next is due report_every later.
  void sent(MonoTime at);

 private:
  Millis report_every_;
  MonoTime next_due_;
  MonoTime last_sent_{};
  bool noted_once_ = false;
  bool changed_ = false;    // a status/liveness/state/error change since the last report
  bool nonfinite_ = false;  // a rise in some rank's non-finite count since the last report
  std::string fingerprint_;
  // Slot owner -> its non-finite count at the last sample. As small as the node: owners no
  // longer in a snapshot are dropped.
  std::map<uint64_t, uint64_t> nonfinite_totals_;
};

}  // namespace trainwatch::agent
