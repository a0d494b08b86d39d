#include "views/held_elsewhere.h"

#include <utility>

namespace trainwatch::views {

bool read_from_holders(jobs::JobPeers* peers, const std::string& job, const http::Request& request,
                       const http::Responder& respond) {
  if (!peers || !request.header(jobs::kHopHeader).empty()) return false;
  jobs::JobHolding holding = peers->holding(job);
  if (holding.here) return false;
  jobs::PeerRequest read;
  read.method = "GET";
  read.target = request.target;
  read.headers = {{std::string(jobs::kHopHeader), std::string(jobs::kHopForwarded)}};
  if (auto accept = request.header("accept"); !accept.empty())
    read.headers.emplace_back("accept", std::string(accept));
  peers->send(std::move(holding.others), std::move(read), [job, respond](Result<net::HttpAnswer> got) {
    if (!got) {
      return respond(http::Response::problem(
          503, "no replica that holds job '" + job + "' answered (" + got.error().message + "); try again"));
    }
    http::Response r;
    r.status = got->status;
    r.content_type = std::move(got->content_type);
    r.body = std::move(got->body);
    respond(std::move(r));
  });
  return true;
}

}  // namespace trainwatch::views
