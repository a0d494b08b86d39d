// JobPeers: the other replicas of an installation, as the job intake and the job routes
// see them. A job is held by two replicas, its owner and its standby (cluster/membership.h,
// holders_of): they alone apply its reports, analyse it and answer its reads. A replica
// that does not hold a job hands what it takes for it to them; one that holds it hands
// each report it takes to the other holder (docs/architecture.md, flow 3, says why).
//
// A lone server has no JobPeers: it holds every job.
//
// Threading: holding() from any thread; send() from any thread, `done` on a thread of the
// implementation's own.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "jobs/report_batch.h"
#include "net/http_connection.h"

namespace trainwatch::jobs {

// Marks a request one replica sent another, so that it is never handed on again.
inline constexpr std::string_view kHopHeader = "x-trainwatch-hop";
// A report a replica that does not hold the job took: the replica it reaches applies it and
// relays it to the other holder.
inline constexpr std::string_view kHopForwarded = "forwarded";
// A report one holder applied, for the other: applied, and nothing more.
inline constexpr std::string_view kHopRelayed = "relayed";

// Where a job is held, as this replica sees it now.
struct JobHolding {
  // This replica holds the job: it applies its reports and answers its reads.
  bool here = true;
  // The other holders' addresses ("host:port"), the owner first: when `here`, the one to
  // relay each report to (none with a single replica); else those to hand everything to,
  // in order. A holder whose address is not known yet is left out.
  std::vector<std::string> others;
  // This replica is the job's owner: the one that lists the job (a list gathered from
  // every replica shows each job once, as its owner sees it).
  bool owner = true;
};

struct PeerRequest {
  std::string method;  // "GET", "POST"
  std::string target;  // "/api/v1/jobs/j/report", with its query
  net::HttpHeaders headers;
  std::string body;
};
// The answer of the first replica that gave one, or why none did.
using PeerDone = std::function<void(Result<net::HttpAnswer>)>;

// One node report for the replicas that hold its job.
struct PeerReport {
  std::string job;
  std::string hop;            // kHopForwarded or kHopRelayed
  std::string authorization;  // the agent's, checked here already
  std::string body;
};
// That replica's answer to it; 503 when no replica answered.
using PeerReportDone = std::function<void(BatchedAnswer)>;

class JobPeers {
 public:
  virtual ~JobPeers() = default;
  virtual JobHolding holding(const std::string& job) const = 0;
  // Every other replica's address, for a read that covers every job (the job list).
  virtual std::vector<std::string> everyone_else() const = 0;
  // Sends `request` to each of `addresses` in turn until one answers with anything but
  // 503 (a replica that no longer holds the job, or is out of its database, says so
  // with 503). Off the caller's thread, bounded: when too many are in flight, `done` gets
  // an error at once.
  virtual void send(std::vector<std::string> addresses, PeerRequest request, PeerDone done) = 0;
  // The same for one node report, sent with the others waiting for the same replica in
  // one batch (report_batch.h): a report tried at a replica that did not answer goes on to
  // the next address in its own next batch.
  virtual void send_report(std::vector<std::string> addresses, PeerReport report, PeerReportDone done) = 0;
};

}  // namespace trainwatch::jobs
