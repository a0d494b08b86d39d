#include "views/held_elsewhere.h"

#include <algorithm>
#include <memory>
#include <mutex>
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

bool lists_here(jobs::JobPeers* peers, const std::string& job) { return !peers || peers->holding(job).owner; }

void gather_job_rows(jobs::JobPeers* peers, const http::Request& request, boost::json::array own,
                     JobRowsDone done) {
  std::vector<std::string> others = peers ? peers->everyone_else() : std::vector<std::string>{};
  if (others.empty() || !request.header(jobs::kHopHeader).empty()) return done(std::move(own), false);
  struct Gathered {
    std::mutex mu;
    boost::json::array rows;  // under mu
    bool partial = false;     // under mu
    size_t left = 0;          // under mu
    JobRowsDone done;
  };
  auto gathered = std::make_shared<Gathered>();
  gathered->rows = std::move(own);
  gathered->left = others.size();
  gathered->done = std::move(done);
  for (std::string& address : others) {
    jobs::PeerRequest list;
    list.method = "GET";
    list.target = "/api/v1/jobs";
    list.headers = {{std::string(jobs::kHopHeader), std::string(jobs::kHopForwarded)}};
    peers->send({std::move(address)}, std::move(list), [gathered](Result<net::HttpAnswer> got) {
      boost::json::array theirs;
      bool answered = false;
      if (got && got->status == 200) {
        boost::system::error_code ec;
        boost::json::value v = boost::json::parse(got->body, ec);
        if (!ec && v.is_object() && v.as_object().contains("jobs") && v.at("jobs").is_array()) {
          theirs = std::move(v.at("jobs").as_array());
          answered = true;
        }
      }
      std::unique_lock lock(gathered->mu);
      for (auto& row : theirs) gathered->rows.push_back(std::move(row));
      gathered->partial = gathered->partial || !answered;
      if (--gathered->left > 0) return;
      boost::json::array rows = std::move(gathered->rows);
      const bool partial = gathered->partial;
      lock.unlock();
      auto name = [](const boost::json::value& row) -> std::string_view {
        const auto* o = row.if_object();
        const auto* n = o ? o->if_contains("name") : nullptr;
        return n && n->is_string() ? std::string_view(n->as_string()) : std::string_view();
      };
      std::sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) { return name(a) < name(b); });
      gathered->done(std::move(rows), partial);
    });
  }
}

}  // namespace trainwatch::views
