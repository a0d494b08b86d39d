// One word for a rank's condition, for the dashboard's rank grid and the API: what a
// person scanning hundreds of cells needs first. Derived from the job's verdict (its
// findings name ranks) and the rank's last report; pure.
//
// Order of precedence: a rank named by a DOWN finding (or one that failed or vanished)
// is `down`; one named by a warning (a straggler) is `warning`; one that finished is
// `finished`; one at least kBehindSteps behind the most advanced rank is `behind`;
// otherwise `ok`. Ranks of a synchronous job sit within a step of each other, so one
// step of lag is normal and not shown.
//
// Lag and step come from the same reading of the ranks (JobFront below), never a rank's
// newest step against the lag of an older verdict: that read ranks ahead as behind.
//
// Lag comes from each node's last report, and nodes report at different instants: a node
// whose report is 2 s older than the newest shows its ranks 2 s of steps behind while they
// keep pace. So the steps the job makes in that age difference (at its smoothed step gap)
// are forgiven before a rank counts as behind.
#pragma once

#include <map>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "jobs/analysis.h"
#include "jobs/job_state.h"

namespace trainwatch::jobs {

enum class RankHealth { kOk, kBehind, kWarning, kDown, kFinished };
std::string_view to_string(RankHealth h);

inline constexpr int64_t kBehindSteps = 2;

// The most advanced rank's step and the newest report, read from the same ranks as the
// record whose health is asked.
struct JobFront {
  int64_t max_step = -1;
  MonoTime newest_seen{};
};
JobFront front_of(const std::map<int, RankRecord>& ranks);

// Steps the rank is behind the most advanced one (one more than the front's step for a
// rank that made none).
int64_t step_lag(const RankRecord& record, const JobFront& front);

// The findings of one verdict indexed by rank, built once in time linear in the ranks the
// findings name: a grid of n ranks costs n look-ups, not n scans of every finding (a
// stalled 16,384-rank job has one finding naming all of them). Holds a pointer to the
// verdict, which must outlive it.
class RankHealthIndex {
 public:
  explicit RankHealthIndex(const JobVerdict& verdict);
  RankHealth health(int rank, const RankRecord& record, const JobFront& front) const;

 private:
  const JobVerdict& verdict_;
  std::unordered_map<int, bool> named_;  // rank -> named by a DOWN finding (else by a warning only)
};

// One rank's health; for many ranks build a RankHealthIndex once instead.
RankHealth rank_health(const JobVerdict& verdict, int rank, const RankRecord& record, const JobFront& front);

// Consecutive ranks of one health, as a summary of a job too big to show rank by rank:
// "ranks 0-999 ok, 1000 down". Ranks absent from the job break a range.
struct RankRange {
  int first = 0, last = 0;
  RankHealth health = RankHealth::kOk;
};
struct RankSummary {
  std::vector<RankRange> ranges;        // in rank order, at most kMaxRankRanges
  size_t ranges_left_out = 0;           // ranges past the bound, counted but not listed
  std::map<RankHealth, size_t> counts;  // ranks by health, over every rank
};
// A summary lists at most this many ranges (a job whose health alternates rank by rank
// would otherwise make one per rank); the rest are counted in ranges_left_out.
inline constexpr size_t kMaxRankRanges = 256;

RankSummary summarise_ranks(const JobVerdict& verdict, const std::map<int, RankRecord>& ranks);
// The same with the ranks' front already taken (front_of(ranks)): one walk fewer.
RankSummary summarise_ranks(const JobVerdict& verdict, const std::map<int, RankRecord>& ranks,
                            const JobFront& front);

}  // namespace trainwatch::jobs
