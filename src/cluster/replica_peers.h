// ReplicaPeers: jobs::JobPeers over the replicas' own HTTP servers. Which replicas hold a
// job comes from the ReplicaSet (membership.h, holders_of); requests go out on a few
// threads of its own, each keeping one connection alive to each replica it talks to
// (net/http_connection.h), so a report handed on costs a round trip on loopback or the
// LAN, not a connection.
//
// Why HTTP, not the store: handing each report through PostgreSQL is what this replaces
// (a 6 KB row written and read back by every replica, per report). A replica already
// serves these very routes, authenticates them and bounds them; forwarding the request
// as it came keeps one code path for a report, whoever took it.
//
// Node reports go in batches (jobs/report_batch.h): those waiting for one replica (with one
// Authorization) leave together, at most kMaxBatchReports at a time, as soon as a thread is
// free; no timer holds them, so at a low rate a batch is one report and at a high one the
// batches grow while the threads are busy.
//
// Bounds: kThreads requests in flight, kMaxQueued requests and kMaxQueuedReports reports
// waiting; one more fails at once (the intake answers 503, and the agent sends its next
// report as usual). Each try of one replica ends within kTimeout.
//
// Threading: any thread; `done` runs on one of its threads, or on the caller's when the
// request is refused at once.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cluster/replica_set.h"
#include "core/clock.h"
#include "jobs/job_peers.h"

namespace trainwatch::cluster {

class ReplicaPeers final : public jobs::JobPeers {
 public:
  static constexpr int kThreads = 4;
  static constexpr size_t kMaxQueued = 1024;
  static constexpr size_t kMaxQueuedReports = 8192;
  static constexpr Millis kTimeout{2'000};

  ReplicaPeers(const ReplicaSet& replicas, const Clock& clock);
  ~ReplicaPeers() override;  // answers what still waits with an error, then joins
  ReplicaPeers(const ReplicaPeers&) = delete;
  ReplicaPeers& operator=(const ReplicaPeers&) = delete;

  jobs::JobHolding holding(const std::string& job) const override;
  std::vector<std::string> everyone_else() const override { return replicas_.other_addresses(); }
  void send(std::vector<std::string> addresses, jobs::PeerRequest request, jobs::PeerDone done) override;
  void send_report(std::vector<std::string> addresses, jobs::PeerReport report,
                   jobs::PeerReportDone done) override;

 private:
  struct Task {
    std::vector<std::string> addresses;
    jobs::PeerRequest request;
    jobs::PeerDone done;
  };
  struct QueuedReport {
    std::vector<std::string> addresses;
    size_t tried = 0;  // addresses already tried; the next try goes to addresses[tried]
    jobs::PeerReport report;
    jobs::PeerReportDone done;
  };
  using Connections = std::map<std::string, std::unique_ptr<net::HttpConnection>>;
  // A batch's queue: reports for one address with one Authorization.
  static std::string queue_key(const QueuedReport& r) {
    return r.addresses[r.tried] + "\n" + r.report.authorization;
  }
  void run();
  void send_batch(std::vector<QueuedReport> batch, Connections& connections);
  // Under mu_: queued for the next address, or into `failed` (answered 503 by the caller,
  // outside the lock) when none is left.
  void retry_or_fail(QueuedReport r, std::vector<QueuedReport>& failed);

  const ReplicaSet& replicas_;
  const Clock& clock_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Task> queue_;                                   // under mu_
  std::map<std::string, std::deque<QueuedReport>> reports_;  // under mu_, by queue_key
  size_t queued_reports_ = 0;                                // under mu_
  std::string last_served_;                                  // under mu_: the queue a batch last came from
  bool stopping_ = false;                                    // under mu_
  std::vector<std::thread> threads_;
};

}  // namespace trainwatch::cluster
