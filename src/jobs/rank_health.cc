#include "jobs/rank_health.h"

#include <algorithm>
#include <optional>

#include "core/enum_names.h"

namespace trainwatch::jobs {

namespace {

constexpr EnumNames<RankHealth, 5> kRankHealthNames{{{RankHealth::kOk, "ok"},
                                                     {RankHealth::kBehind, "behind"},
                                                     {RankHealth::kWarning, "warning"},
                                                     {RankHealth::kDown, "down"},
                                                     {RankHealth::kFinished, "finished"}}};

}  // namespace

std::string_view to_string(RankHealth h) { return name_of(kRankHealthNames, h); }

namespace {

// Steps the job makes between this rank's report and the newest one, rounded up.
int64_t report_skew_steps(const JobVerdict& verdict, const RankRecord& record, MonoTime newest_seen) {
  const auto gap = verdict.timeouts.smoothed_step_gap;
  if (!gap || gap->count() <= 0 || newest_seen <= record.seen) return 0;
  const auto age = std::chrono::duration_cast<Millis>(newest_seen - record.seen);
  return (age.count() + gap->count() - 1) / gap->count();
}

}  // namespace

JobFront front_of(const std::map<int, RankRecord>& ranks) {
  JobFront front;
  for (const auto& [rank, r] : ranks) {
    front.max_step = std::max(front.max_step, r.last.step);
    front.newest_seen = std::max(front.newest_seen, r.seen);
  }
  return front;
}

int64_t step_lag(const RankRecord& record, const JobFront& front) {
  return record.last.step >= 0 ? front.max_step - record.last.step : front.max_step + 1;
}

RankHealthIndex::RankHealthIndex(const JobVerdict& verdict) : verdict_(verdict) {
  for (const Finding& f : verdict.findings) {
    const bool down = f.severity == Severity::kDown;
    for (int rank : f.ranks) {
      auto [it, inserted] = named_.emplace(rank, down);
      if (!inserted) it->second = it->second || down;
    }
  }
}

RankHealth RankHealthIndex::health(int rank, const RankRecord& record, const JobFront& front) const {
  auto named = named_.find(rank);
  if (named != named_.end() && named->second) return RankHealth::kDown;
  const RankReport& last = record.last;
  // Gone with exit code 0 is finished, whatever it last said (core/rank_rule.h).
  const bool finished =
      last.status == RankStatus::kFinished || (!last.alive && last.exit && last.exit->code == 0);
  if (last.status == RankStatus::kFailed || (!last.alive && !finished)) return RankHealth::kDown;
  if (named != named_.end()) return RankHealth::kWarning;
  if (finished) return RankHealth::kFinished;
  if (step_lag(record, front) - report_skew_steps(verdict_, record, front.newest_seen) >= kBehindSteps)
    return RankHealth::kBehind;
  return RankHealth::kOk;
}

RankHealth rank_health(const JobVerdict& verdict, int rank, const RankRecord& record, const JobFront& front) {
  return RankHealthIndex(verdict).health(rank, record, front);
}

RankSummary summarise_ranks(const JobVerdict& verdict, const std::map<int, RankRecord>& ranks) {
  return summarise_ranks(verdict, ranks, front_of(ranks));
}

RankSummary summarise_ranks(const JobVerdict& verdict, const std::map<int, RankRecord>& ranks,
                            const JobFront& front) {
  RankSummary out;
  const RankHealthIndex index(verdict);
  std::optional<RankRange> open;
  auto close = [&] {
    if (!open) return;
    if (out.ranges.size() < kMaxRankRanges) {
      out.ranges.push_back(*open);
    } else {
      ++out.ranges_left_out;
    }
  };
  for (const auto& [rank, r] : ranks) {
    const RankHealth h = index.health(rank, r, front);
    ++out.counts[h];
    if (open && open->health == h && open->last + 1 == rank) {
      open->last = rank;
      continue;
    }
    close();
    open = RankRange{rank, rank, h};
  }
  close();
  return out;
}

}  // namespace trainwatch::jobs
