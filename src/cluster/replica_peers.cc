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
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    left.swap(queue_);
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
  for (Task& task : left) task.done(make_error("peers.stopping", "the server is stopping"));
}

jobs::JobHolding ReplicaPeers::holding(const std::string& job) const {
  // A job's monitor is named after the job, so the job's holders are its monitor's owner
  // and that owner's standby: the replica that checks the job analyses what it applied.
  const ReplicaSet::Holding h = replicas_.holding(job);
  jobs::JobHolding out;
  out.here = h.owner_here || h.standby_here;
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

void ReplicaPeers::run() {
  // This thread's own connections, one per replica it talks to (HttpConnection is not
  // thread-safe); a replica that left keeps an idle socket until its connection's age ends it.
  std::map<std::string, std::unique_ptr<net::HttpConnection>> connections;
  for (;;) {
    Task task;
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      task = std::move(queue_.front());
      queue_.pop_front();
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
