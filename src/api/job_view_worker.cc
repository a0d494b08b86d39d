#include "api/job_view_worker.h"

#include <boost/asio/post.hpp>

namespace trainwatch::api {

void JobViewWorker::post(http::Responder respond, std::function<void(http::Responder)> view) {
  if (pending_.fetch_add(1) >= kMaxPending) {
    pending_.fetch_sub(1);
    http::Response r = http::Response::problem(
        503, "the server is building " + std::to_string(kMaxPending) + " job views already; retry in a second");
    r.headers.emplace_back("Retry-After", "1");
    return respond(std::move(r));
  }
  boost::asio::post(pool_, [this, respond = std::move(respond), view = std::move(view)]() mutable {
    view(std::move(respond));
    pending_.fetch_sub(1);
  });
}

}  // namespace trainwatch::api
