#include "jobs/job_registry.h"

namespace trainwatch::jobs {

void JobRegistry::configure(const Config& config) {
  std::lock_guard lock(mu_);
  jobs_config_ = config.jobs;
  declared_.clear();
  for (const auto& m : config.monitors) {
    const auto* spec = std::get_if<JobCheckSpec>(&m.spec);
    if (!spec) continue;
    declared_.insert(m.name);
    auto& entry = jobs_[m.name];
    if (!entry) entry = std::make_unique<Entry>(m.name, clock_.monotonic_time());
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

IngestOutcome JobRegistry::ingest(const std::string& job, const NodeReport& report) {
  const MonoTime now = clock_.monotonic_time();
  const SystemTime wall = clock_.system_time();
  std::lock_guard lock(mu_);
  auto it = jobs_.find(job);
  bool created = false;
  if (it == jobs_.end()) {
    if (!jobs_config_.auto_create) return IngestOutcome::kUnknownJob;
    if (auto_created_ >= kMaxAutoJobs) return IngestOutcome::kTooManyJobs;
    auto entry = std::make_unique<Entry>(job, now);
    entry->spec.thresholds = jobs_config_.thresholds;
    entry->spec.auto_created = true;
    it = jobs_.emplace(job, std::move(entry)).first;
    ++auto_created_;
    created = true;
  }
  if (!it->second->state.ingest(report, now, wall)) return IngestOutcome::kTooManyNodes;
  return created ? IngestOutcome::kCreated : IngestOutcome::kAccepted;
}

CheckResult JobRegistry::evaluate(const MonitorConfig& monitor) {
  const MonoTime now = clock_.monotonic_time();
  const SystemTime wall = clock_.system_time();
  const auto* spec = std::get_if<JobCheckSpec>(&monitor.spec);
  std::lock_guard lock(mu_);
  auto& entry = jobs_[monitor.name];
  if (!entry) entry = std::make_unique<Entry>(monitor.name, now);
  if (spec) entry->spec = *spec;
  JobVerdict v = analyze(entry->state, entry->spec, now, wall);
  CheckResult r;
  r.at = wall;
  if (v.undecided && entry->last_result) {
    r = *entry->last_result;
    r.at = wall;
    return r;
  }
  r.ok = !v.down;
  r.cause = v.cause;
  entry->last_result = r;
  return r;
}

std::vector<std::string> JobRegistry::names() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& [name, entry] : jobs_) out.push_back(name);
  return out;
}

std::optional<JobSnapshot> JobRegistry::snapshot(const std::string& job) const {
  const MonoTime now = clock_.monotonic_time();
  const SystemTime wall = clock_.system_time();
  std::lock_guard lock(mu_);
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return std::nullopt;
  JobSnapshot s;
  s.state = std::make_shared<const JobState>(it->second->state);
  s.spec = it->second->spec;
  s.verdict = analyze(it->second->state, s.spec, now, wall);
  s.at = now;
  s.wall = wall;
  return s;
}

}  // namespace trainwatch::jobs
