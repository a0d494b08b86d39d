#include "jobs/node_findings.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/duration.h"
#include "jobs/gpu_findings.h"
#include "jobs/rank_set.h"

namespace trainwatch::jobs::rules {
namespace {

// Ranks of other nodes that went on stepping after a silent node's last report.
struct PeerAdvance {
  std::string phrase;  // ranks_phrase of those ranks
  size_t count = 0;
  int64_t lowest_step = INT64_MAX;
};

// The lowest two values of a measure over nodes, each from a different node: the lowest
// over every node but any one of them, without a walk per node left out.
template <typename T>
class LowestTwo {
 public:
  void add(const std::string& node, T value) {
    if (first_.node == nullptr || value < first_.value) {
      second_ = first_;
      first_ = {&node, value};
    } else if (second_.node == nullptr || value < second_.value) {
      second_ = {&node, value};
    }
  }
  // The lowest over the nodes other than `node`; nullopt when there is none.
  std::optional<T> except(const std::string& node) const {
    const Entry& e = first_.node != nullptr && *first_.node != node ? first_ : second_;
    if (e.node == nullptr) return std::nullopt;
    return e.value;
  }

 private:
  struct Entry {
    const std::string* node = nullptr;
    T value{};
  };
  Entry first_, second_;
};

// In a synchronous job no rank completes a step without every other, so peers that went
// on stepping after a silent node's last report carried its ranks with them: the node
// lost its agent (killed, out of memory), not its ranks. Each running rank on another,
// fresh (not overdue) node must show it by its own node's last report, and at least one
// must: a step past the highest the silent node's ranks last reported, made after that
// report, and still stepping, with no step for at most its node's report interval (or
// two step gaps, where steps are slower). That last bar tells a lost agent from a dead
// node: the peers of a dead node hang in their next collective, so by the time it counts
// as silent (missed_reports intervals) their reports show more than an interval without
// a step, while a pause shorter than an interval does not page.
// What that rule asks of every running rank on a fresh (not overdue) node, gathered once
// per analysis and by node: a job of 16,384 nodes may have thousands silent at once (a
// switch down, the server itself overloaded), and a walk of 131,072 ranks for each of them
// made one analysis take minutes, during which no report could be applied.
class PeerProgress {
 public:
  explicit PeerProgress(const Context& c) {
    const Millis two_gaps = 2 * c.job.learned().smoothed_step_gap().value_or(Millis{0});
    std::map<std::string_view, ByNode> nodes;
    for (const RankEntry& e : c.ranks) {
      if (!e.running || e.node_overdue) continue;
      const RankRecord& r = *e.r;
      ByNode& n = nodes[r.node];
      n.name = &r.node;
      ++n.count;
      ranks_.emplace_back(e.rank, &r.node);
      const NodeRecord* node = c.node(r.node);
      const auto idle = no_step_at_report(r);
      if (node == nullptr || !idle || *idle > std::max(node->report_every, two_gaps)) {
        n.stalled = true;
        continue;
      }
      n.oldest_step_at = std::min(n.oldest_step_at, *r.last_step_at);
      n.lowest_step = std::min(n.lowest_step, r.last.step);
    }
    for (const auto& [name, n] : nodes) {
      counts_[name] = n.count;
      if (n.stalled) stalled_.push_back(n.name);
      oldest_step_at_.add(*n.name, n.oldest_step_at);
      lowest_step_.add(*n.name, n.lowest_step);
    }
    std::vector<int> all;
    all.reserve(ranks_.size());
    for (const auto& [rank, node] : ranks_) all.push_back(rank);
    phrase_ = ranks_phrase(all);
  }

  // The rule for the silent node `silent`, whose ranks last reported step `step_then` in
  // its report at `last_seen`.
  std::optional<PeerAdvance> advanced(const std::string& silent, MonoTime last_seen,
                                      int64_t step_then) const {
    // A rank elsewhere without a step for too long: the peers may hang with the node.
    if (stalled_.size() > 1 || (stalled_.size() == 1 && *stalled_[0] != silent)) return std::nullopt;
    auto own = counts_.find(silent);
    const size_t own_count = own == counts_.end() ? 0 : own->second;
    if (ranks_.size() == own_count) return std::nullopt;  // no peer to speak for it
    const auto oldest = oldest_step_at_.except(silent);
    const auto lowest = lowest_step_.except(silent);
    if (!oldest || !lowest || *oldest <= last_seen || *lowest <= step_then) return std::nullopt;
    PeerAdvance peers;
    peers.lowest_step = *lowest;
    peers.count = ranks_.size() - own_count;
    if (own_count == 0) {
      peers.phrase = phrase_;
    } else {  // a silent node not yet overdue (node_silent_after under 1.5 intervals)
      std::vector<int> others;
      for (const auto& [rank, node] : ranks_) {
        if (*node != silent) others.push_back(rank);
      }
      peers.phrase = ranks_phrase(others);
    }
    return peers;
  }

 private:
  struct ByNode {
    const std::string* name = nullptr;
    size_t count = 0;
    bool stalled = false;  // a rank without a step for longer than the bar, or on an unknown node
    MonoTime oldest_step_at = MonoTime::max();
    int64_t lowest_step = INT64_MAX;
  };

  std::vector<std::pair<int, const std::string*>> ranks_;  // running ranks on fresh nodes, and their node
  std::map<std::string_view, size_t> counts_;              // of ranks_, by node
  std::vector<const std::string*> stalled_;                // nodes with a stalled rank
  LowestTwo<MonoTime> oldest_step_at_;
  LowestTwo<int64_t> lowest_step_;
  std::string phrase_;  // of every rank in ranks_
};

// A node past its silence limit with ranks that were running there: node_silent (down),
// unless the ranks of other nodes show its ranks training, when only monitoring is lost
// (a warning: nobody should be paged for a dead agent while the job trains on).
void silent_node_findings(const Context& c, const PeerProgress& progress, const std::string& name,
                          const NodeRecord& n, std::vector<Finding>& out) {
  std::vector<int> ranks;
  int64_t step_then = -1;
  for (int rank : n.ranks) {
    auto it = c.job.ranks().find(rank);
    if (it == c.job.ranks().end() || done(it->second.last) || it->second.node != name) continue;
    ranks.push_back(rank);
    step_then = std::max(step_then, it->second.last.step);
  }
  if (ranks.empty()) return;  // nothing was running there: a quiet node is no failure
  const MonoTime since = n.last_seen + c.silent_after(n);
  if (auto peers = progress.advanced(name, n.last_seen, step_then)) {
    out.push_back({FindingCode::kMonitoringLost, Severity::kWarning, ranks, name,
                   "monitoring lost for node " + name + ": no report for " + ago(c.now, n.last_seen) +
                       ", but " + peers->phrase + " on other nodes " + (peers->count == 1 ? "has" : "have") +
                       " advanced from step " + std::to_string(step_then) + " to step " +
                       std::to_string(peers->lowest_step) + " since, so its " + ranks_phrase(ranks) +
                       (ranks.size() == 1 ? " is" : " are") + " still training",
                   kOrderWarning, since});
    return;
  }
  out.push_back({FindingCode::kNodeSilent, Severity::kDown, ranks, name,
                 "node " + name + " has sent no report for " + ago(c.now, n.last_seen) + " (" +
                     std::to_string(c.t.missed_reports) + " reports missed; " + ranks_phrase(ranks) +
                     " last seen there at " + clock_time(c.wall(n.last_seen)) + ")",
                 kOrderNodeSilent, since, n.last_seen});
}

// A node whose agent said goodbye (its final report) while ranks there still ran. With the
// agent hosted in a rank (trainwatch.init(server=...)), the agent's host ends first and
// another local rank takes the role over (docs/training.md), so a report with final false
// follows within a second or two. When none follows within the silence limit, nobody
// watches those ranks: a warning, never a page, and never a timeout of the ranks, whose
// progress froze with that report. A node whose every rank ended is simply finished.
void unwatched_node_findings(const Context& c, const std::string& name, const NodeRecord& n,
                             std::vector<Finding>& out) {
  if (!n.final || c.now - n.last_seen <= c.silent_after(n)) return;
  std::vector<int> ranks;
  for (int rank : n.ranks) {
    auto it = c.job.ranks().find(rank);
    if (it == c.job.ranks().end() || it->second.node != name) continue;
    if (it->second.last.alive && !done(it->second.last)) ranks.push_back(rank);
  }
  if (ranks.empty()) return;
  out.push_back({FindingCode::kMonitoringLost, Severity::kWarning, ranks, name,
                 "monitoring lost for node " + name + ": its agent stopped with its host process at " +
                     clock_time(c.wall(n.last_seen)) + " while " + ranks_phrase(ranks) +
                     (ranks.size() == 1 ? " was" : " were") +
                     " still running there, and no agent has reported since",
                 kOrderWarning, n.last_seen + c.silent_after(n)});
}

void disk_and_memory_findings(const Context& c, const std::string& name, const NodeRecord& n,
                              std::vector<Finding>& out) {
  for (const auto& d : n.disks) {
    if (!d.ok) {
      out.push_back({FindingCode::kDiskMissing,
                     Severity::kWarning,
                     {},
                     name,
                     d.name + " " + d.path + " on " + name + " cannot be read: " + d.error,
                     kOrderWarning,
                     n.last_seen});
    } else if (d.free_bytes < c.t.disk_free_bytes) {
      out.push_back({FindingCode::kDiskLow,
                     Severity::kWarning,
                     {},
                     name,
                     d.name + " " + d.path + " on " + name + " has " +
                         fmt("%.1f GB", static_cast<double>(d.free_bytes) / 1e9) + " free < " +
                         fmt("%.1f GB", static_cast<double>(c.t.disk_free_bytes) / 1e9),
                     kOrderWarning,
                     n.last_seen});
    }
  }
  if (n.memory_available_bytes && *n.memory_available_bytes < c.t.host_memory_free_bytes) {
    out.push_back({FindingCode::kMemoryLow,
                   Severity::kWarning,
                   {},
                   name,
                   "host memory available on " + name + " is " +
                       fmt("%.1f GB", static_cast<double>(*n.memory_available_bytes) / 1e9) + " < " +
                       fmt("%.1f GB", static_cast<double>(c.t.host_memory_free_bytes) / 1e9),
                   kOrderWarning,
                   n.last_seen});
  }
}

// A closed rendezvous matters only while one of the node's ranks runs.
void rendezvous_findings(const Context& c, const std::string& name, const NodeRecord& n,
                         std::vector<Finding>& out) {
  if (!n.rendezvous || n.rendezvous->listening || n.rendezvous->port <= 0) return;
  bool any_running = false;
  for (int rank : n.ranks) {
    const RankEntry* e = c.rank(rank);
    any_running = any_running || (e != nullptr && e->running);
  }
  if (any_running) {
    out.push_back({FindingCode::kRendezvousClosed,
                   Severity::kWarning,
                   {},
                   name,
                   "rendezvous " + n.rendezvous->host + ":" + std::to_string(n.rendezvous->port) +
                       " is not accepting connections (seen from " + name + ")",
                   kOrderWarning,
                   n.last_seen});
  }
}

// Ranks the node's agent can no longer see: their slot went while they run (a cleanup of
// /dev/shm, agent/removed_slots.h). Nobody can tell whether they step, fail or hang, so
// they are not timed out (RankEntry::slot_removed), and this warning says why, naming the
// file, until they exit or restart.
void removed_slot_findings(const Context& c, const std::string& name, const NodeRecord& n,
                           std::vector<Finding>& out) {
  for (const auto& s : n.slots_removed) {
    const RankEntry* e = c.rank(s.rank);
    if (e == nullptr || e->r->node != name || !e->slot_removed) continue;
    out.push_back({FindingCode::kSlotRemoved,
                   Severity::kWarning,
                   {s.rank},
                   name,
                   Context::who(s.rank, *e->r) + " cannot be watched: its slot file " + s.path +
                       " was removed while it ran (a cleanup of /dev/shm or of TRAINWATCH_DIR?), so its "
                       "steps, status and a hang go unseen until it restarts",
                   kOrderWarning,
                   n.last_seen});
  }
}

// A rank that two reporting nodes both carry: a mislabelled launch or a stale agent.
// Sorted by rank, each rank's nodes in name order; a run of two or more is the finding.
void claimed_twice_findings(const Context& c, std::vector<Finding>& out) {
  std::vector<std::pair<int, const std::string*>> claims;
  claims.reserve(c.ranks.size());
  for (const auto& [name, n] : c.job.nodes()) {
    if (c.silent(n) || n.final) continue;
    for (int rank : n.ranks) claims.emplace_back(rank, &name);
  }
  std::stable_sort(claims.begin(), claims.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < claims.size();) {
    size_t end = i + 1;
    while (end < claims.size() && claims[end].first == claims[i].first) ++end;
    if (end - i >= 2) {
      std::string list;
      for (size_t j = i; j < end; ++j) list += (list.empty() ? "" : " and ") + *claims[j].second;
      out.push_back({FindingCode::kRankClaimedTwice,
                     Severity::kWarning,
                     {claims[i].first},
                     "",
                     "rank " + std::to_string(claims[i].first) + " is reported by two nodes: " + list,
                     kOrderWarning,
                     c.now});
    }
    i = end;
  }
}

}  // namespace

void node_findings(const Context& c, std::vector<Finding>& out) {
  std::optional<PeerProgress> progress;  // only once a node is silent
  for (const auto& [name, n] : c.job.nodes()) {
    if (c.silent(n)) {
      if (!progress) progress.emplace(c);
      silent_node_findings(c, *progress, name, n, out);
      continue;
    }
    unwatched_node_findings(c, name, n, out);
    gpu_findings(c.job, name, n, c.t, {kOrderHardware, kOrderWarning}, out);
    fabric_findings(c.job, name, n, {kOrderHardware, kOrderWarning}, out);
    disk_and_memory_findings(c, name, n, out);
    rendezvous_findings(c, name, n, out);
    removed_slot_findings(c, name, n, out);
  }
  claimed_twice_findings(c, out);
}

}  // namespace trainwatch::jobs::rules
