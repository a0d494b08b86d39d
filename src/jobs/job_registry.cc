#include "jobs/job_registry.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "jobs/culprit_labels.h"
#include "jobs/job_memo.h"

namespace trainwatch::jobs {
namespace {

// The nodes `verdict`'s findings name, by their own node or their ranks', in the findings'
// order (the culprit's first), each once: at most `limit`, and after the first only while
// their ranks together stay within kMaxDetailedRanks (a node may carry 1,024).
std::vector<std::string> named_nodes(const JobVerdict& verdict, const JobState& state, size_t limit) {
  std::vector<std::string> out;
  size_t ranks = 0;
  auto add = [&](const std::string& node) {
    if (node.empty() || out.size() >= limit || std::find(out.begin(), out.end(), node) != out.end()) return;
    auto it = state.nodes().find(node);
    if (it == state.nodes().end()) return;
    if (!out.empty() && ranks + it->second.ranks.size() > kMaxDetailedRanks) return;
    ranks += it->second.ranks.size();
    out.push_back(node);
  };
  // The verdict lists its findings down first, each severity in blame order (analysis.h).
  for (const Finding& f : verdict.findings) {
    add(f.node);
    // A job-wide finding may name every rank: its first few name enough nodes.
    const size_t examined = std::min(f.ranks.size(), 8 * limit);
    for (size_t i = 0; i < examined && out.size() < limit; ++i) {
      if (auto it = state.ranks().find(f.ranks[i]); it != state.ranks().end()) add(it->second.node);
    }
  }
  return out;
}

// Ranks the job would have after `report`: its ranks plus the report's new ones.
size_t ranks_after(const JobState& state, const NodeReport& report) {
  std::vector<int> fresh;
  for (const auto& r : report.ranks) {
    if (state.ranks().count(r.rank) == 0) fresh.push_back(r.rank);
  }
  std::sort(fresh.begin(), fresh.end());
  fresh.erase(std::unique(fresh.begin(), fresh.end()), fresh.end());
  return state.ranks().size() + fresh.size();
}

// The rank bound `report` would cross in `state`: kTooManyRanks, else kAccepted.
IngestResult rank_refusal(const JobState& state, const JobCheckSpec& spec, size_t max_ranks,
                          const NodeReport& report) {
  const size_t limit = spec.world_size > 0 ? static_cast<size_t>(spec.world_size) : max_ranks;
  const size_t after = ranks_after(state, report);
  bool over = after > limit;
  // A declared world_size also names the ranks: 0 to world_size - 1.
  for (const auto& r : report.ranks) over = over || (spec.world_size > 0 && r.rank >= spec.world_size);
  if (!over) return {};
  return {IngestOutcome::kTooManyRanks, limit, after, spec.world_size > 0 ? "world_size" : "jobs.max_ranks"};
}

// The bounds a report is held to, read under the registry's lock; `node` is the refusal
// of a node reporting more ranks than jobs.max_ranks_per_node, else accepted.
struct ReportBounds {
  size_t max_ranks = 0;
  Millis expire_after{0};
  IngestResult node;
};

ReportBounds report_bounds(const JobsConfig& config, const NodeReport& report) {
  ReportBounds bounds{static_cast<size_t>(config.max_ranks), config.expire_after, {}};
  const auto max_per_node = static_cast<size_t>(config.max_ranks_per_node);
  if (report.ranks.size() > max_per_node)
    bounds.node = {IngestOutcome::kTooManyRanksOnNode, max_per_node, report.ranks.size(),
                   "jobs.max_ranks_per_node"};
  return bounds;
}

}  // namespace

void JobRegistry::configure(const Config& config) {
  const MonoTime now = clock_.monotonic_time();
  std::lock_guard lock(mu_);
  jobs_config_ = config.jobs;
  declared_.clear();
  for (const auto& m : config.monitors) {
    const auto* spec = std::get_if<JobCheckSpec>(&m.spec);
    if (!spec) continue;
    declared_.insert(m.name);
    auto& entry = jobs_[m.name];
    if (!entry) entry = std::make_shared<Entry>(m.name, now);
    if (entry->spec.auto_created && !spec->auto_created && auto_created_ > 0)
      --auto_created_;  // now declared
    entry->spec = *spec;
  }
}

MonitorConfig JobRegistry::auto_monitor(const std::string& job) const {
  std::lock_guard lock(mu_);
  MonitorConfig m;
  m.name = job;
  m.type = MonitorType::kJob;
  m.interval = Millis{1'000};
  m.notify = jobs_config_.notify;
  JobCheckSpec spec;
  spec.thresholds = jobs_config_.thresholds;
  spec.auto_created = true;
  m.spec = spec;
  m.where.file = "(created by the first report)";
  return m;
}

std::vector<std::string> JobRegistry::take_expired(MonoTime now) {
  std::vector<std::string> names;
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    const Entry& e = *it->second;
    if (e.spec.auto_created && declared_.count(it->first) == 0 &&
        now - e.last_report > jobs_config_.expire_after) {
      names.push_back(it->first);
      // Under mu_, so the release is posted before a report can recreate the job and post
      // its new monitor: the engine applies them in that order.
      if (on_expired_) on_expired_(it->first);
      it = jobs_.erase(it);  // readers holding the entry keep it alive until they finish
      if (auto_created_ > 0) --auto_created_;
    } else {
      ++it;
    }
  }
  return names;
}

std::shared_ptr<JobRegistry::Entry> JobRegistry::find_or_create(const std::string& job, MonoTime now,
                                                                IngestResult& result,
                                                                std::vector<std::string>& expired) {
  if (auto it = jobs_.find(job); it != jobs_.end()) return it->second;
  if (!jobs_config_.auto_create) {
    result = {IngestOutcome::kUnknownJob, 0, 0, ""};
    return nullptr;
  }
  if (auto_created_ >= kMaxAutoJobs) expired = take_expired(now);
  if (auto_created_ >= kMaxAutoJobs) {
    result = {IngestOutcome::kTooManyJobs, kMaxAutoJobs, auto_created_ + 1, "auto-created jobs"};
    return nullptr;
  }
  auto created = std::make_shared<Entry>(job, now);
  created->spec.thresholds = jobs_config_.thresholds;
  created->spec.auto_created = true;
  jobs_.emplace(job, created);
  ++auto_created_;
  result.outcome = IngestOutcome::kCreated;
  return created;
}

Result<IngestOutcome> JobRegistry::resume(const std::string& job, std::string_view memo) {
  const MonoTime now = clock_.monotonic_time();
  const SystemTime wall = clock_.system_time();
  IngestResult result;
  std::vector<std::string> expired;
  std::shared_ptr<Entry> entry;
  {
    std::lock_guard lock(mu_);
    entry = find_or_create(job, now, result, expired);
  }
  if (!entry) return result.outcome;
  Status applied = Ok{};
  {
    std::lock_guard analysis(entry->analysis_mu);
    std::unique_lock state(entry->state_mu);
    if (entry->state.reports() > 0) return IngestOutcome::kOutdated;  // reports came first: they are newer
    applied = apply_job_memo(memo, entry->state, entry->ledger, now, wall);
    if (applied) {
      entry->memo_key = memo_key(*entry);
      auto published = std::make_shared<const InterruptionLedger>(entry->ledger);
      std::lock_guard verdict(entry->verdict_mu);
      entry->published_ledger = std::move(published);
    }
  }
  if (!applied && result.outcome == IngestOutcome::kCreated) {
    std::lock_guard lock(mu_);  // created for nothing: no monitor will come for it
    if (auto it = jobs_.find(job); it != jobs_.end() && it->second == entry && entry->state.reports() == 0) {
      jobs_.erase(it);
      if (auto_created_ > 0) --auto_created_;
    }
  }
  if (!applied) return applied.error();
  return result.outcome;
}

JobRegistry::MemoKey JobRegistry::memo_key(const Entry& entry) {
  const auto& attempts = entry.state.attempts();
  return {attempts.empty() ? 0 : attempts.back().number, entry.ledger.revision()};
}

std::optional<std::string> JobRegistry::memo_if_changed(Entry& entry, MonoTime now, SystemTime wall) {
  std::lock_guard analysis(entry.analysis_mu);
  std::shared_lock state(entry.state_mu);
  const MemoKey key = memo_key(entry);
  if (entry.memo_key == key) return std::nullopt;
  entry.memo_key = key;
  return encode_job_memo(entry.state, entry.ledger, now, wall);
}

void JobRegistry::released(const std::vector<std::string>& names, Millis expire_after) {
  if (names.empty()) return;
  {
    std::lock_guard lock(counters_mu_);
    expired_ += names.size();
  }
  for (const auto& name : names) {
    spdlog::info("job {} released: no report for {} ms (jobs.expire_after)", name, expire_after.count());
  }
}

void JobRegistry::refused(const std::string& job, const IngestResult& result) {
  const MonoTime now = clock_.monotonic_time();
  uint64_t unlogged = 0;
  {
    std::lock_guard lock(counters_mu_);
    switch (result.outcome) {
      case IngestOutcome::kTooManyJobs: ++refusals_.too_many_jobs; break;
      case IngestOutcome::kTooManyNodes: ++refusals_.too_many_nodes; break;
      case IngestOutcome::kTooManyRanks: ++refusals_.too_many_ranks; break;
      case IngestOutcome::kTooManyRanksOnNode: ++refusals_.too_many_ranks_on_node; break;
      default: return;
    }
    // One line per kRefusalLogEvery: a misconfigured fleet refuses every few seconds per node.
    if (last_refusal_log_ && now - *last_refusal_log_ < kRefusalLogEvery) {
      ++refusals_unlogged_;
      return;
    }
    last_refusal_log_ = now;
    unlogged = std::exchange(refusals_unlogged_, 0);
  }
  spdlog::warn("job {}: report refused at {} ({} > {}){}", job, result.bound, result.actual, result.limit,
               unlogged ? " and " + std::to_string(unlogged) + " more refused since the last such line" : "");
}

IngestResult JobRegistry::admit(const std::string& job, const NodeReport& report) {
  const MonoTime now = clock_.monotonic_time();
  IngestResult result;
  std::shared_ptr<Entry> entry;
  JobCheckSpec spec;
  size_t max_ranks = 0;
  Millis expire_after{0};
  std::vector<std::string> expired;
  {
    std::lock_guard lock(mu_);
    ReportBounds bounds = report_bounds(jobs_config_, report);
    max_ranks = bounds.max_ranks;
    expire_after = bounds.expire_after;
    if (bounds.node.outcome != IngestOutcome::kAccepted) {
      result = std::move(bounds.node);
    } else if (auto it = jobs_.find(job); it != jobs_.end()) {
      entry = it->second;
      spec = entry->spec;
    } else if (!jobs_config_.auto_create) {
      return {IngestOutcome::kUnknownJob, 0, 0, ""};
    } else {
      // As find_or_create() would: room is made from expired jobs before refusing.
      if (auto_created_ >= kMaxAutoJobs) expired = take_expired(now);
      if (auto_created_ >= kMaxAutoJobs)
        result = {IngestOutcome::kTooManyJobs, kMaxAutoJobs, auto_created_ + 1, "auto-created jobs"};
      spec.thresholds = jobs_config_.thresholds;
    }
  }
  released(expired, expire_after);
  if (result.outcome == IngestOutcome::kAccepted) {
    if (entry) {
      std::shared_lock lock(entry->state_mu);
      result = rank_refusal(entry->state, spec, max_ranks, report);
      const auto& nodes = entry->state.nodes();
      if (result.outcome == IngestOutcome::kAccepted && nodes.count(report.node) == 0 &&
          nodes.size() >= kMaxNodesPerJob) {
        result = {IngestOutcome::kTooManyNodes, kMaxNodesPerJob, nodes.size() + 1, "nodes per job"};
      }
    } else {
      result = rank_refusal(JobState(job, now), spec, max_ranks, report);  // a job created by this report
    }
  }
  refused(job, result);
  return result;
}

IngestResult JobRegistry::ingest(const std::string& job, const NodeReport& report) {
  return ingest(job, report, Millis{0});
}

IngestResult JobRegistry::ingest(const std::string& job, const NodeReport& report, Millis age) {
  age = std::max(age, Millis{0});
  const MonoTime now = clock_.monotonic_time() - age;
  const SystemTime wall = clock_.system_time() - age;
  std::shared_ptr<Entry> entry;
  JobCheckSpec spec;
  IngestResult result;
  size_t max_ranks = 0;
  Millis expire_after{0};
  std::vector<std::string> expired;
  {
    std::lock_guard lock(mu_);
    ReportBounds bounds = report_bounds(jobs_config_, report);
    max_ranks = bounds.max_ranks;
    expire_after = bounds.expire_after;
    if (bounds.node.outcome != IngestOutcome::kAccepted) {
      result = std::move(bounds.node);
    } else {
      entry = find_or_create(job, now, result, expired);
    }
    if (result.outcome == IngestOutcome::kUnknownJob) return result;
    if (entry) {
      entry->last_report = now;
      spec = entry->spec;
    }
  }
  released(expired, expire_after);
  if (!entry) {
    refused(job, result);
    return result;
  }
  {
    std::unique_lock lock(entry->state_mu);
    IngestResult over = rank_refusal(entry->state, spec, max_ranks, report);
    auto node = entry->state.nodes().find(report.node);
    if (age.count() > 0 && node != entry->state.nodes().end() && node->second.last_seen_wall >= wall) {
      result = {IngestOutcome::kOutdated, 0, 0, ""};
    } else if (over.outcome != IngestOutcome::kAccepted) {
      result = std::move(over);
    } else if (!entry->state.ingest(report, now, wall)) {
      result = {IngestOutcome::kTooManyNodes, kMaxNodesPerJob, entry->state.nodes().size() + 1,
                "nodes per job"};
    }
  }
  if (result.outcome != IngestOutcome::kAccepted && result.outcome != IngestOutcome::kCreated) {
    std::lock_guard lock(mu_);
    // A job this refused report created has no monitor yet: it goes again.
    auto it = jobs_.find(job);
    if (it != jobs_.end() && it->second == entry && entry->state.reports() == 0 && entry->spec.auto_created &&
        declared_.count(job) == 0) {
      jobs_.erase(it);
      if (auto_created_ > 0) --auto_created_;
    }
  }
  refused(job, result);
  return result;
}

CheckResult JobRegistry::evaluate(const MonitorConfig& monitor) {
  const MonoTime now = clock_.monotonic_time();
  const SystemTime wall = clock_.system_time();
  const auto* monitor_spec = std::get_if<JobCheckSpec>(&monitor.spec);
  std::shared_ptr<Entry> entry;
  JobCheckSpec spec;
  std::vector<std::string> expired;
  Millis expire_after{0};
  bool gone = false;
  {
    std::lock_guard lock(mu_);
    expire_after = jobs_config_.expire_after;
    auto it = jobs_.find(monitor.name);
    if (it != jobs_.end()) {
      entry = it->second;
    } else if (!monitor_spec || !monitor_spec->auto_created) {
      // A declared job: it exists before any report.
      entry = jobs_.emplace(monitor.name, std::make_shared<Entry>(monitor.name, now)).first->second;
    }
    expired = take_expired(now);
    gone = !entry || std::find(expired.begin(), expired.end(), monitor.name) != expired.end();
    if (!gone && monitor_spec) entry->spec = *monitor_spec;
    if (!gone) spec = entry->spec;
  }
  released(expired, expire_after);
  CheckResult r;
  if (gone) {
    // Released: its monitor goes too (on_expired). Until then it holds its last result, so
    // the release itself is no recovery and no alert.
    if (entry && entry->last_result) {
      r = *entry->last_result;
    } else {
      r.ok = true;
    }
    r.at = wall;
    return r;
  }
  const auto v = analyse_and_publish(*entry, spec, now, wall);
  if (on_memo_) {
    if (auto memo = memo_if_changed(*entry, now, wall)) on_memo_(monitor.name, std::move(*memo));
  }
  if (v->undecided && entry->last_result) {
    r = *entry->last_result;
    r.at = wall;
    return r;
  }
  r.at = wall;
  r.ok = !v->down;
  r.cause = v->cause;
  r.warning = v->notify;
  // No rank has reported yet, and the start-up timeout has not passed: neither up nor down.
  r.pending = !v->down && v->phase == JobPhase::kWaiting;
  if (v->down && !v->findings.empty()) r.labels = culprit_labels(v->findings.front());
  entry->last_result = r;
  return r;
}

std::vector<std::string> JobRegistry::names() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  out.reserve(jobs_.size());
  for (const auto& [name, entry] : jobs_) out.push_back(name);
  return out;
}

std::optional<JobSnapshot> JobRegistry::snapshot(const std::string& job, SnapshotDetail detail) const {
  const MonoTime now = clock_.monotonic_time();
  const SystemTime wall = clock_.system_time();
  std::shared_ptr<Entry> entry;
  JobSnapshot s;
  {
    std::lock_guard lock(mu_);
    auto it = jobs_.find(job);
    if (it == jobs_.end()) return std::nullopt;
    entry = it->second;
    s.spec = entry->spec;
  }
  // The verdict and the ranks' summary of one tick, taken together.
  std::shared_ptr<const PublishedRanks> ranks;
  {
    std::lock_guard lock(entry->verdict_mu);
    ranks = entry->published_ranks;
    s.verdict = entry->verdict;
  }
  if (!s.verdict) s.verdict = published_verdict(*entry);  // not analysed yet: `waiting`
  s.ledger = published_ledger(*entry);
  std::shared_lock lock(entry->state_mu);
  const JobState& state = entry->state;
  s.rank_count = state.ranks().size();
  s.node_count = state.nodes().size();
  s.ranks_omitted = detail != SnapshotDetail::kDetail || s.rank_count > kMaxDetailedRanks;
  // As the last tick saw them; before the first, as they are now (a walk of the ranks).
  if (!ranks)
    ranks = std::make_shared<const PublishedRanks>(
        PublishedRanks{summarise_ranks(*s.verdict, state.ranks()), front_of(state.ranks())});
  s.rank_summary = ranks->summary;
  s.front = ranks->front;
  s.max_step = s.front.max_step;
  std::set<std::string> only;
  if (detail == SnapshotDetail::kSummary) {
    s.nodes_omitted = true;
  } else if (detail == SnapshotDetail::kDetail && s.ranks_omitted) {
    s.nodes_omitted = true;
    s.named_nodes = named_nodes(*s.verdict, state, kMaxNamedNodes);
    only.insert(s.named_nodes.begin(), s.named_nodes.end());
  }
  const bool with_ranks = detail == SnapshotDetail::kDetail;
  s.state =
      std::make_shared<const JobState>(state.copy_for_reader(with_ranks, s.nodes_omitted ? &only : nullptr));
  s.at = now;
  s.wall = wall;
  return s;
}

std::optional<std::map<std::string, Series>> JobRegistry::series(const std::string& job,
                                                                 const std::string& metric) const {
  std::shared_ptr<Entry> entry;
  {
    std::lock_guard lock(mu_);
    auto it = jobs_.find(job);
    if (it == jobs_.end()) return std::nullopt;
    entry = it->second;
  }
  std::shared_lock lock(entry->state_mu);
  auto it = entry->state.series().find(metric);
  if (it == entry->state.series().end()) return std::map<std::string, Series>{};
  return it->second;
}

IngestRefusals JobRegistry::refusals() const {
  std::lock_guard lock(counters_mu_);
  return refusals_;
}

uint64_t JobRegistry::expired() const {
  std::lock_guard lock(counters_mu_);
  return expired_;
}

}  // namespace trainwatch::jobs
