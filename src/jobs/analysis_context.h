// What the analysis's rules share (analysis.h): one rank as they see it, the context of one
// analysis (the job, its thresholds, the instant) and the words findings are written in.
// Internal to the jobs component: the rules live in analysis.cc, stall_findings.cc,
// node_findings.cc and pace_findings.cc, each a group of findings with its own evidence.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/rank_rule.h"
#include "jobs/analysis.h"

namespace trainwatch::jobs::rules {

// Attribution order of each kind of down finding (see analysis.h).
enum Order : int {
  // A fault of the node's hardware (jobs/gpu_findings.h: a GPU off the bus, an XID that
  // needs a reset, a link down) explains the ranks that vanished or failed with it.
  kOrderHardware = 90,
  kOrderGone = 100,
  kOrderNodeSilent = 200,
  kOrderStopped = 300,
  kOrderHung = 350,
  kOrderStalled = 400,
  kOrderStartup = 450,
  kOrderNumbers = 500,
  kOrderCheckpoint = 550,
  kOrderFailed = 700,
  kOrderMissing = 800,
  kOrderRestarting = 900,
  kOrderWarning = 1000,
};

// printf of one number: fmt("%.1f ms", 12.34) -> "12.3 ms".
std::string fmt(const char* f, double v);
// "12s": how long before now.
std::string ago(MonoTime now, MonoTime then);
// "NaN", "inf", or the number as %g.
std::string number_text(double v);

// Exited with code 0 once gone: finished, whatever its last status said (core/rank_rule.h).
inline bool exited_ok(const RankReport& r) { return !r.alive && r.exit && r.exit->code == 0; }

inline bool finished(const RankReport& r) { return r.status == RankStatus::kFinished || exited_ok(r); }

inline bool done(const RankReport& r) { return finished(r) || r.status == RankStatus::kFailed; }

inline bool in_checkpoint(const RankReport& r) {
  return r.status == RankStatus::kCheckpointing || r.checkpoint.state == CheckpointState::kInProgress;
}

// How long the rank had gone without a step when its node sent its last report. Unlike
// `now - last step`, this does not grow while the server waits for the next report, so
// it is evidence of the rank itself, not of the age of the news.
inline std::optional<Millis> no_step_at_report(const RankRecord& r) {
  if (!r.last_step_at) return std::nullopt;
  return std::chrono::duration_cast<Millis>(r.seen - *r.last_step_at);
}

// One rank as an analysis sees it: its record, and what its node's last report says,
// looked up once. Every pass below asks about each rank's node; looking it up each time
// in the job's ordered map of nodes, and walking its ordered map of ranks, was over half
// of an analysis of 16,384 ranks (bench/jobs/job_bench.cc).
struct RankEntry {
  int rank;
  const RankRecord* r;
  bool node_silent;   // Context::silent
  bool node_overdue;  // Context::overdue
  bool running;       // not done, not gone, on a node that still reports and has not said goodbye
};

class Context {
 public:
  Context(const JobState& of, const JobThresholds& thresholds, MonoTime at, SystemTime wall_at)
      : job(of), t(thresholds), now(at), wall_now(wall_at) {
    nodes_.reserve(job.nodes().size());
    for (const auto& [name, n] : job.nodes()) nodes_.emplace(name, &n);
    ranks.reserve(job.ranks().size());
    // A node's ranks are mostly neighbours: its facts are looked up once for a run of them.
    const std::string* of_node = nullptr;
    bool node_silent = false, node_overdue = false, node_final = false;
    for (const auto& [rank, r] : job.ranks()) {
      if (of_node == nullptr || *of_node != r.node) {
        of_node = &r.node;
        const NodeRecord* n = node(r.node);
        node_silent = n != nullptr && silent(*n);
        node_overdue = n != nullptr && overdue(*n);
        // A rank left alive by its node's final report is unwatched, not running: its step
        // and state froze with that report, so no timeout may read them as a hang.
        node_final = n != nullptr && n->final;
      }
      ranks.push_back({rank, &r, node_silent, node_overdue,
                       r.last.alive && !done(r.last) && !node_silent && !node_final});
    }
  }

  const JobState& job;
  const JobThresholds& t;
  const MonoTime now;
  const SystemTime wall_now;
  std::vector<RankEntry> ranks;  // in rank order

  const NodeRecord* node(const std::string& name) const {
    auto it = nodes_.find(name);
    return it == nodes_.end() ? nullptr : it->second;
  }
  const RankEntry* rank(int rank) const {
    auto it = std::lower_bound(ranks.begin(), ranks.end(), rank,
                               [](const RankEntry& e, int wanted) { return e.rank < wanted; });
    return it != ranks.end() && it->rank == rank ? &*it : nullptr;
  }

  SystemTime wall(MonoTime at) const {
    return wall_now - std::chrono::duration_cast<SystemTime::duration>(now - at);
  }

  Millis silent_after(const NodeRecord& n) const {
    return t.node_silent_after.value_or(Millis(n.report_every.count() * t.missed_reports));
  }
  bool silent(const NodeRecord& n) const { return !n.final && now - n.last_seen > silent_after(n); }
  // Overdue: its last report is older than one and a half intervals. Its ranks' progress is
  // stale, so it is not evidence that they hung; silence (later) speaks for them.
  bool overdue(const NodeRecord& n) const { return !n.final && now - n.last_seen > n.report_every * 3 / 2; }

  RankFacts facts(const RankRecord& r) const {
    RankFacts f;
    f.alive = r.last.alive;
    f.finished = r.last.status == RankStatus::kFinished;
    f.failed = r.last.status == RankStatus::kFailed;
    f.exited_ok = exited_ok(r.last);
    f.checkpointing = r.last.status == RankStatus::kCheckpointing;
    f.state = r.last.state;
    if (r.last_step_at) f.no_step_for = std::chrono::duration_cast<Millis>(now - *r.last_step_at);
    return f;
  }

  // "rank 5 (node-2, pid 41231)"
  static std::string who(int rank, const RankRecord& r) {
    return "rank " + std::to_string(rank) + " (" + r.node + ", pid " + std::to_string(r.last.pid) + ")";
  }
  static std::string at_step(const RankRecord& r) {
    return r.last.step >= 0 ? " at step " + std::to_string(r.last.step) : " before its first step";
  }

 private:
  std::unordered_map<std::string_view, const NodeRecord*> nodes_;  // the job's, by name
};

using RankRef = std::pair<int, const RankRecord*>;

}  // namespace trainwatch::jobs::rules
