// ReportPusher: sends the node report to POST {server}/api/v1/jobs/{job}/report every
// report_every, sooner when a rank changes status, liveness or process state or reports
// a new non-finite loss (push_plan.h: when, and how often at most), and one last time
// (final: true) when the agent stops. The push is also the node's heartbeat.
//
// Threads: offer() is called by the agent's sampler; one pusher thread renders and POSTs
// (net/http_connection.h: one kept-alive connection for the pusher's life, each POST
// with a timeout), so a slow or absent server never delays a sample or /health.
// Bounds: one report in flight; a newer snapshot replaces an unsent one (the server wants
// the present, not a backlog); each POST, its one retry included, gives up after
// `timeout`, so finish() waits at most that long for the last report.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "agent/node_report.h"
#include "agent/node_snapshot.h"
#include "agent/push_plan.h"
#include "core/clock.h"
#include "core/result.h"
#include "net/http_connection.h"

namespace trainwatch::agent {

struct PushOptions {
  std::string server_url;  // http(s)://host:port (a path prefix is kept)
  std::string token;       // bearer token; empty: none
  std::string node;        // this node's name
  Millis report_every{5'000};
  Millis timeout{3'000};  // per POST
};

class ReportPusher {
 public:
  // Checks the URL and starts the thread. Error "argument" for a URL that is not http(s).
  static Result<std::unique_ptr<ReportPusher>> start(PushOptions options, const Clock& clock);
  ~ReportPusher();
  ReportPusher(const ReportPusher&) = delete;
  ReportPusher& operator=(const ReportPusher&) = delete;

  // The sampler's latest view of the node.
  void offer(const NodeSnapshot& node);
  // Sends the latest snapshot as the final report and stops; returns within about
  // options.timeout (one POST). Idempotent.
  void finish();

  uint64_t sent() const;
  uint64_t failed() const;

 private:
  ReportPusher(PushOptions options, const Clock& clock);
  void run();
  bool post(const std::string& url, const std::string& body, std::string* error);

  PushOptions options_;
  const Clock& clock_;
  std::string url_;
  net::HttpConnection connection_;  // the pusher thread's alone

  mutable std::mutex mu_;  // guards everything below
  std::condition_variable cv_;
  std::optional<NodeSnapshot> latest_;
  std::map<uint64_t, RankTrack> tracks_;                         // by slot owner
  std::map<uint64_t, std::pair<uint64_t, int64_t>> last_steps_;  // owner -> (step_reports, wall ms seen)
  PushPlan plan_;
  bool finishing_ = false;
  uint64_t seq_ = 0, sent_ = 0, failed_ = 0;
  bool last_failed_ = false;
  std::thread thread_;
};

}  // namespace trainwatch::agent
