#include "cluster/replica_peers.h"

#include <map>
#include <memory>
#include <utility>

namespace trainwatch::cluster {

ReplicaPeers::ReplicaPeers(const ReplicaSet& replicas, const Clock& clock)
    : replicas_(replicas), clock_(clock) {
  threads_.reserve(kThreads);
  for (int i = 0; i < kThreads; ++i) threads_.emplace_back([this] { run(); });
}

ReplicaPeers::~ReplicaPeers() {
  std::deque<Task> left;
  std::map<std::string, std::deque<QueuedReport>> left_reports;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    left.swap(queue_);
    left_reports.swap(reports_);
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
  for (Task& task : left) task.done(make_error("peers.stopping", "the server is stopping"));
  for (auto& [key, reports] : left_reports) {
    for (QueuedReport& r : reports) r.done({503, "the server is stopping"});
  }
}

jobs::JobHolding ReplicaPeers::holding(const std::string& job) const {
  // A job's monitor is named after the job, so the job's holders are its monitor's owner
  // and that owner's standby: the replica that checks the job analyses what it applied.
  const ReplicaSet::Holding h = replicas_.holding(job);
  jobs::JobHolding out;
  out.here = h.owner_here || h.standby_here;
  out.owner = h.owner_here;
  for (const std::string* address : {&h.owner_address, &h.standby_address}) {
    if (!address->empty()) out.others.push_back(*address);
  }
  return out;
}

void ReplicaPeers::send(std::vector<std::string> addresses, jobs::PeerRequest request, jobs::PeerDone done) {
  if (addresses.empty()) return done(make_error("peers.none", "no other replica holds the job"));
  {
    std::lock_guard lock(mu_);
    if (stopping_) return done(make_error("peers.stopping", "the server is stopping"));
    if (queue_.size() >= kMaxQueued) {
      return done(
          make_error("peers.busy", std::to_string(kMaxQueued) + " requests already wait for a replica"));
    }
    queue_.push_back(Task{std::move(addresses), std::move(request), std::move(done)});
  }
  wake_.notify_one();
}

void ReplicaPeers::send_report(std::vector<std::string> addresses, jobs::PeerReport report,
                               jobs::PeerReportDone done) {
  if (addresses.empty()) return done({503, "no other replica holds the job"});
  {
    std::lock_guard lock(mu_);
    if (stopping_) return done({503, "the server is stopping"});
    if (queued_reports_ >= kMaxQueuedReports) {
      return done({503, std::to_string(kMaxQueuedReports) + " reports already wait for a replica"});
    }
    QueuedReport r{std::move(addresses), 0, std::move(report), std::move(done)};
    reports_[queue_key(r)].push_back(std::move(r));
    ++queued_reports_;
  }
  wake_.notify_one();
}

void ReplicaPeers::retry_or_fail(QueuedReport r, std::vector<QueuedReport>& failed) {
  if (++r.tried < r.addresses.size()) {
    reports_[queue_key(r)].push_back(std::move(r));
    ++queued_reports_;
    return;
  }
  failed.push_back(std::move(r));
}

void ReplicaPeers::send_batch(std::vector<QueuedReport> batch, Connections& connections) {
  const std::string& address = batch.front().addresses[batch.front().tried];
  jobs::PeerRequest request;
  request.method = "POST";
  request.target = std::string(jobs::kBatchPath);
  request.headers = {{"content-type", "application/octet-stream"}, {std::string(jobs::kHopHeader), "batch"}};
  if (!batch.front().report.authorization.empty())
    request.headers.emplace_back("authorization", batch.front().report.authorization);
  for (const QueuedReport& r : batch)
    jobs::append_report(request.body, {r.report.job, r.report.hop, r.report.body});
  auto& connection = connections[address];
  if (!connection) connection = std::make_unique<net::HttpConnection>(clock_);
  auto got = connection->send(request.method, "http://" + address + request.target, request.body,
                              request.headers, kTimeout);
  std::string why;
  Result<std::vector<jobs::BatchedAnswer>> answers = make_error("peers.none", "");
  if (!got) {
    why = address + ": " + got.error().message;
  } else if (got->status != 200) {
    why = address + " answered " + std::to_string(got->status);
  } else if (answers = jobs::parse_answer_batch(got->body); !answers || answers->size() != batch.size()) {
    why = address + " answered a batch that does not match the reports sent";
  }
  if (why.empty()) {
    for (size_t i = 0; i < batch.size(); ++i) batch[i].done(std::move((*answers)[i]));
    return;
  }
  std::vector<QueuedReport> failed;
  {
    std::lock_guard lock(mu_);
    for (QueuedReport& r : batch) retry_or_fail(std::move(r), failed);
  }
  wake_.notify_all();
  for (QueuedReport& r : failed)
    r.done({503, "no replica that holds job '" + r.report.job + "' answered (" + why + ")"});
}

void ReplicaPeers::run() {
  // This thread's own connections, one per replica it talks to (HttpConnection is not
  // thread-safe); a replica that left keeps an idle socket until its connection's age ends it.
  Connections connections;
  for (;;) {
    Task task;
    std::vector<QueuedReport> batch;
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty() || queued_reports_ > 0; });
      if (stopping_) return;
      // Reports first: an agent waits on each; a read is one request among many.
      if (queued_reports_ > 0) {
        // The queue after the last one served, so that a busy replica's queue does not
        // starve another's.
        auto it = reports_.upper_bound(last_served_);
        if (it == reports_.end()) it = reports_.begin();
        last_served_ = it->first;
        size_t bytes = 0;
        while (!it->second.empty() && batch.size() < jobs::kMaxBatchReports &&
               (batch.empty() || bytes + it->second.front().report.body.size() <= jobs::kMaxBatchBytes)) {
          bytes += it->second.front().report.body.size();
          batch.push_back(std::move(it->second.front()));
          it->second.pop_front();
          --queued_reports_;
        }
        if (it->second.empty()) reports_.erase(it);
      } else {
        task = std::move(queue_.front());
        queue_.pop_front();
      }
    }
    if (!batch.empty()) {
      send_batch(std::move(batch), connections);
      continue;
    }
    Result<net::HttpAnswer> last = make_error("peers.none", "no replica answered");
    for (const std::string& address : task.addresses) {
      auto& connection = connections[address];
      if (!connection) connection = std::make_unique<net::HttpConnection>(clock_);
      last = connection->send(task.request.method, "http://" + address + task.request.target,
                              task.request.body, task.request.headers, kTimeout);
      if (last && last->status != 503) break;
      if (!last) last = make_error("peers.unreachable", address + ": " + last.error().message);
    }
    task.done(std::move(last));
  }
}

}  // namespace trainwatch::cluster
