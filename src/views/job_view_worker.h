// JobViewWorker: runs the job API's and the job pages' request handlers on a thread of its
// own, so building a job's JSON or HTML never runs on the HTTP threads that answer pings
// and /healthz. A handler posted here answers through its Responder (safe from any thread).
//
// Bound: at most kMaxPending views queued or running; one more is answered at once with
// 503 and Retry-After: 1 instead of queueing (a burst of page loads cannot grow memory or
// the wait without limit). Views are bounded in size (jobs::kMaxDetailedRanks), so the
// queue drains in milliseconds each.
//
// Lifetime: shared by the routes' handlers; destroying it joins the thread after the views
// already queued ran, so what they reference must outlive the router.
#pragma once

#include <atomic>
#include <functional>

#include <boost/asio/thread_pool.hpp>

#include "http/server.h"

namespace trainwatch::views {

class JobViewWorker {
 public:
  static constexpr int kMaxPending = 32;

  // Runs `view` on the worker, or answers `respond` with 503 when kMaxPending are pending.
  void post(http::Responder respond, std::function<void(http::Responder)> view);

 private:
  std::atomic<int> pending_{0};
  boost::asio::thread_pool pool_{1};  // last: joined first, while the counter still exists
};

}  // namespace trainwatch::views
