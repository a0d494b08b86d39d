#include "jobs/job_journal.h"

#include <spdlog/spdlog.h>

namespace trainwatch::jobs {

JobJournal::JobJournal(Store& store, JobRegistry& registry, const Clock& clock, std::string writer,
                       std::function<void(const std::string& job)> on_created)
    : store_(store),
      registry_(registry),
      clock_(clock),
      writer_(std::move(writer)),
      on_created_(std::move(on_created)) {}

bool JobJournal::save(const std::string& job, const std::string& node, std::string body, WriteDone done) {
  return store_.write(SaveNodeReport{job, node, std::move(body), clock_.system_time(), writer_},
                      std::move(done));
}

void JobJournal::save_memo(const std::string& job, std::string memo) {
  store_.write(SaveJobMemo{job, std::move(memo), clock_.system_time()});
  std::lock_guard lock(kept_mu_);
  if (auto it = kept_.find(job); it != kept_.end()) it->second.due = true;
}

void JobJournal::keep(const std::string& job, const std::string& node, std::string body) {
  const SystemTime received = clock_.system_time();
  std::lock_guard lock(kept_mu_);
  KeptJob& kept = kept_[job];
  if (kept.nodes.empty() && kept.written == MonoTime{}) kept.written = clock_.monotonic_time();
  kept.nodes[node] = Kept{std::move(body), received};
}

size_t JobJournal::write_kept(const std::function<bool(const std::string&)>& writes_here,
                              const std::function<bool(const std::string&)>& held_here) {
  const MonoTime now = clock_.monotonic_time();
  return write_kept_when(
      [&](const std::string& job, const KeptJob& kept) {
        const Millis since = std::chrono::duration_cast<Millis>(now - kept.written);
        return writes_here(job) && (since >= kWriteEvery || (kept.due && since >= kMinWriteGap));
      },
      held_here);
}

size_t JobJournal::write_all_kept() {
  return write_kept_when([](const std::string&, const KeptJob&) { return true; },
                         [](const std::string&) { return true; });
}

size_t JobJournal::write_kept_when(const std::function<bool(const std::string&, const KeptJob&)>& now_for,
                                   const std::function<bool(const std::string&)>& held_here) {
  const MonoTime now = clock_.monotonic_time();
  std::vector<std::pair<std::string, std::map<std::string, Kept>>> to_write;
  {
    std::lock_guard lock(kept_mu_);
    for (auto it = kept_.begin(); it != kept_.end();) {
      KeptJob& kept = it->second;
      if (!held_here(it->first)) {
        it = kept_.erase(it);  // its holders have it; this replica's copy would only go stale
        continue;
      }
      if (!kept.nodes.empty() && now_for(it->first, kept)) {
        to_write.emplace_back(it->first, std::move(kept.nodes));
        kept.nodes.clear();
        kept.written = now;
        kept.due = false;
      }
      ++it;
    }
  }
  size_t queued = 0;
  for (auto& [job, nodes] : to_write) {
    for (auto& [node, kept] : nodes) {
      // A write the store refuses is logged by the store; the node's next report is kept
      // and written at the next round, so what is lost is one round of one node's state.
      if (store_.write(SaveNodeReport{job, node, std::move(kept.body), kept.received, writer_})) {
        ++queued;
      } else if (auto n = kept_write_log_.admit(now)) {
        spdlog::warn("job {}: the store's write queue is full; {} node state(s) wait for the next round", job,
                     *n);
      }
    }
  }
  return queued;
}

Status JobJournal::resume_jobs(Millis max_age) {
  auto memos = store_.job_memos();
  if (!memos) return memos.error();
  const SystemTime now = clock_.system_time();
  for (const StoredJobMemo& memo : *memos) {
    if (now - memo.saved > max_age) continue;  // its job is long released
    auto resumed = registry_.resume(memo.job, memo.body);
    if (!resumed) {
      spdlog::warn("job {}: its stored memo cannot be read ({}); its attempts and interruptions start afresh",
                   memo.job, resumed.error().message);
    } else if (*resumed == IngestOutcome::kCreated && on_created_) {
      on_created_(memo.job);
    }
  }
  return Ok{};
}

Result<size_t> JobJournal::restore(Millis max_age) {
  if (auto resumed = resume_jobs(max_age); !resumed) return resumed.error();
  return read(true, max_age);
}

Result<size_t> JobJournal::follow() { return read(false, Millis::max()); }

Result<size_t> JobJournal::read(bool restoring, Millis max_age) {
  size_t applied = 0;
  for (int page = 0; page < kMaxPages; ++page) {
    auto feed = store_.node_reports_after(cursor_);
    if (!feed) return feed.error();
    const SystemTime now = clock_.system_time();
    for (const StoredNodeReport& row : feed->reports) {
      const auto age = std::chrono::duration_cast<Millis>(now - row.received);
      if (age > max_age) continue;                        // its job is long released
      if (!restoring && row.writer == writer_) continue;  // applied when this replica took it
      auto report = parse_node_report(row.body);
      if (!report) {
        // Only a body this version cannot read (saved by another version) gets here.
        if (auto n = bad_row_log_.admit(clock_.monotonic_time())) {
          spdlog::warn("job {}: the stored report of node {} cannot be read ({}); {} such row(s) skipped",
                       row.job, row.node, report.error().message, *n);
        }
        continue;
      }
      const IngestResult result = registry_.ingest(row.job, *report, restoring ? Millis{0} : age);
      if (result.outcome == IngestOutcome::kCreated && on_created_) on_created_(row.job);
      if (result.outcome == IngestOutcome::kCreated || result.outcome == IngestOutcome::kAccepted) ++applied;
    }
    const bool more = feed->next != cursor_ && !feed->reports.empty();
    cursor_ = feed->next;
    if (!more || static_cast<int>(feed->reports.size()) < Store::kMaxNodeReportsPerRead) break;
  }
  return applied;
}

}  // namespace trainwatch::jobs
