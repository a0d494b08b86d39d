#include "views/job_view_worker.h"

#include <exception>

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

namespace trainwatch::views {

void JobViewWorker::post(http::Responder respond, std::function<void(http::Responder)> view) {
  if (pending_.fetch_add(1) >= kMaxPending) {
    pending_.fetch_sub(1);
    http::Response r = http::Response::problem(503, "the server is building " + std::to_string(kMaxPending) +
                                                        " job views already; retry in a second");
    r.headers.emplace_back("Retry-After", "1");
    return respond(std::move(r));
  }
  boost::asio::post(pool_, [this, respond = std::move(respond), view = std::move(view)]() mutable {
    // No exception may leave the worker's thread (it would end the process): a view that
    // throws answers 500 and the worker goes on.
    try {
      view(respond);
    } catch (const std::exception& e) {
      spdlog::error("job view failed: {}", e.what());
      respond(http::Response::problem(500, "the job view could not be built"));
    }
    pending_.fetch_sub(1);
  });
}

}  // namespace trainwatch::views
