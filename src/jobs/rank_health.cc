#include "jobs/rank_health.h"

#include <algorithm>

namespace trainwatch::jobs {

std::string_view to_string(RankHealth h) {
  switch (h) {
    case RankHealth::kOk: return "ok";
    case RankHealth::kBehind: return "behind";
    case RankHealth::kWarning: return "warning";
    case RankHealth::kDown: return "down";
    case RankHealth::kFinished: return "finished";
  }
  return "ok";
}

namespace {

// Steps the job makes between this rank's report and the newest one, rounded up.
int64_t report_skew_steps(const JobVerdict& verdict, const RankRecord& record, MonoTime newest_seen) {
  const auto gap = verdict.timeouts.smoothed_step_gap;
  if (!gap || gap->count() <= 0 || newest_seen <= record.seen) return 0;
  const auto age = std::chrono::duration_cast<Millis>(newest_seen - record.seen);
  return (age.count() + gap->count() - 1) / gap->count();
}

}  // namespace

RankHealth rank_health(const JobVerdict& verdict, int rank, const RankRecord& record, MonoTime newest_seen) {
  bool warned = false;
  for (const Finding& f : verdict.findings) {
    if (std::find(f.ranks.begin(), f.ranks.end(), rank) == f.ranks.end()) continue;
    if (f.severity == Severity::kDown) return RankHealth::kDown;
    warned = true;
  }
  const RankReport& last = record.last;
  if (last.status == RankStatus::kFailed || (!last.alive && last.status != RankStatus::kFinished)) return RankHealth::kDown;
  if (warned) return RankHealth::kWarning;
  if (last.status == RankStatus::kFinished) return RankHealth::kFinished;
  auto lag = verdict.lag.find(rank);
  if (lag != verdict.lag.end() && lag->second - report_skew_steps(verdict, record, newest_seen) >= kBehindSteps) {
    return RankHealth::kBehind;
  }
  return RankHealth::kOk;
}

}  // namespace trainwatch::jobs
