// JobRegistry's publication (job_registry.h): an analysis of a job's state, and the
// verdict, ranks and ledger it publishes for readers, who never analyse.
#include "jobs/job_registry.h"

#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

namespace trainwatch::jobs {

std::shared_ptr<const JobVerdict> JobRegistry::analyse_and_publish(Entry& entry, const JobCheckSpec& spec,
                                                                   MonoTime now, SystemTime wall) {
  std::shared_ptr<const JobVerdict> verdict;
  std::shared_ptr<const InterruptionLedger> ledger;
  std::shared_ptr<const PublishedRanks> ranks;
  std::lock_guard analysis(entry.analysis_mu);
  {
    std::shared_lock lock(entry.state_mu);
    verdict = std::make_shared<const JobVerdict>(analyse(entry.state, spec, now, wall));
    const JobFront front = front_of(entry.state.ranks());
    ranks = std::make_shared<const PublishedRanks>(
        PublishedRanks{summarise_ranks(*verdict, entry.state.ranks(), front), front});
    // Readers get a copy of the ledger when it changed.
    if (entry.ledger.observe(entry.state, *verdict, now, wall))
      ledger = std::make_shared<const InterruptionLedger>(entry.ledger);
  }
  // Under analysis_mu, so the last one published is the newest.
  std::lock_guard lock(entry.verdict_mu);
  entry.verdict = verdict;
  entry.published_ranks = std::move(ranks);
  if (ledger) entry.published_ledger = std::move(ledger);
  return verdict;
}

std::shared_ptr<const InterruptionLedger> JobRegistry::published_ledger(const Entry& entry) {
  // Never destroyed: a reader on another thread may still copy it while the process exits.
  static const auto* const kEmpty =
      new std::shared_ptr<const InterruptionLedger>(std::make_shared<const InterruptionLedger>());
  std::lock_guard lock(entry.verdict_mu);
  return entry.published_ledger ? entry.published_ledger : *kEmpty;
}

std::shared_ptr<const JobVerdict> JobRegistry::published_verdict(const Entry& entry) {
  // Never destroyed, as kEmpty above.
  static const auto* const kNotEvaluated = [] {
    JobVerdict v;
    v.phase = JobPhase::kWaiting;
    return new std::shared_ptr<const JobVerdict>(std::make_shared<const JobVerdict>(std::move(v)));
  }();
  std::lock_guard lock(entry.verdict_mu);
  return entry.verdict ? entry.verdict : *kNotEvaluated;
}

std::map<InterruptionKind, CauseTotals> JobRegistry::interruption_totals() const {
  std::vector<std::shared_ptr<Entry>> entries;
  {
    std::lock_guard lock(mu_);
    entries.reserve(jobs_.size());
    for (const auto& [name, entry] : jobs_) entries.push_back(entry);
  }
  std::map<InterruptionKind, CauseTotals> out;
  for (const auto& entry : entries) {
    for (const auto& [kind, t] : published_ledger(*entry)->totals()) {
      out[kind].count += t.count;
      out[kind].gpu_hours_lost += t.gpu_hours_lost;
    }
  }
  return out;
}

void JobRegistry::analyse_others(const std::function<bool(const std::string&)>& standby_here) {
  const MonoTime now = clock_.monotonic_time();
  const SystemTime wall = clock_.system_time();
  std::vector<std::pair<std::shared_ptr<Entry>, JobCheckSpec>> others;
  std::vector<std::string> expired;
  Millis expire_after{0};
  {
    std::lock_guard lock(mu_);
    expire_after = jobs_config_.expire_after;
    expired = take_expired(now);
    for (const auto& [name, entry] : jobs_) {
      if (standby_here(name)) others.emplace_back(entry, entry->spec);
    }
  }
  released(expired, expire_after);
  for (auto& [entry, spec] : others) analyse_and_publish(*entry, spec, now, wall);
}

}  // namespace trainwatch::jobs
