#include "agent/report_pusher.h"

#include "agent/own_threads.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace trainwatch::agent {

Result<std::unique_ptr<ReportPusher>> ReportPusher::start(PushOptions options, const Clock& clock) {
  const std::string& url = options.server_url;
  if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) {
    return make_error("argument", "server URL '" + url + "' must start with http:// or https://");
  }
  if (options.node.empty()) {
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) == 0) options.node = host;
    if (options.node.empty()) options.node = "node";
  }
  std::unique_ptr<ReportPusher> p(new ReportPusher(std::move(options), clock));
  p->thread_ = std::thread([raw = p.get()] {
    register_own_thread();
    raw->run();
  });
  return p;
}

ReportPusher::ReportPusher(PushOptions options, const Clock& clock)
    : options_(std::move(options)),
      clock_(clock),
      connection_(clock),
      plan_(options_.report_every, clock.monotonic_time()) {}

ReportPusher::~ReportPusher() { finish(); }

void ReportPusher::offer(const NodeSnapshot& node) {
  std::lock_guard lock(mu_);
  for (const auto& r : node.ranks) {
    RankTrack& t = tracks_[r.slot.owner];
    auto& [reports, seen_ms] = last_steps_[r.slot.owner];
    if (r.slot.step_reports != reports) {
      if (reports > 0 && seen_ms > 0) t.max_step_gap_ms = std::max(t.max_step_gap_ms, node.now_ms - seen_ms);
      reports = r.slot.step_reports;
      seen_ms = node.now_ms;
    }
    if (!r.alive && !t.gone_since_ms) t.gone_since_ms = node.now_ms;
  }
  // Forget ranks whose slot now has another owner (a restart): the maps stay as small as the node.
  std::erase_if(tracks_, [&](const auto& kv) {
    return std::none_of(node.ranks.begin(), node.ranks.end(),
                        [&](const RankView& r) { return r.slot.owner == kv.first; });
  });
  std::erase_if(last_steps_, [&](const auto& kv) { return tracks_.count(kv.first) == 0; });
  latest_ = node;
  if (plan_.note(node)) cv_.notify_all();
}

void ReportPusher::finish() {
  {
    std::lock_guard lock(mu_);
    finishing_ = true;
    cv_.notify_all();
  }
  // The thread sends the final report (one POST, bounded by options_.timeout) and exits.
  if (thread_.joinable()) thread_.join();
}

uint64_t ReportPusher::sent() const {
  std::lock_guard lock(mu_);
  return sent_;
}

uint64_t ReportPusher::failed() const {
  std::lock_guard lock(mu_);
  return failed_;
}

void ReportPusher::run() {
  std::unique_lock lock(mu_);
  while (true) {
    // Sleep until the report is due (push_plan.h); offer() wakes us when news brings it forward.
    while (!finishing_) {
      const MonoTime now = clock_.monotonic_time();
      const MonoTime wake = plan_.due();
      if (now >= wake) break;
      cv_.wait_for(lock, wake - now);
    }
    const bool final = finishing_;
    plan_.sent(clock_.monotonic_time());
    if (!latest_) {
      if (final) break;
      continue;
    }
    if (url_.empty()) {
      std::string base = options_.server_url;
      while (!base.empty() && base.back() == '/') base.pop_back();
      url_ = base + "/api/v1/jobs/" + latest_->job + "/report";
    }
    ReportMeta meta{options_.node, ++seq_, final, options_.report_every, static_cast<int64_t>(::getpid())};
    std::string body = render_node_report(*latest_, tracks_, meta);
    for (auto& [owner, t] : tracks_) t.max_step_gap_ms = 0;
    const std::string url = url_;
    lock.unlock();
    std::string error;
    bool ok = post(url, body, &error);
    lock.lock();
    ++(ok ? sent_ : failed_);
    // One line when pushing starts failing and one when it recovers, not one per report.
    if (!ok && !last_failed_)
      std::fprintf(stderr, "trainwatch agent: report to %s failed: %s\n", url.c_str(), error.c_str());
    if (ok && last_failed_)
      std::fprintf(stderr, "trainwatch agent: reports to %s go through again\n", url.c_str());
    last_failed_ = !ok;
    if (final) break;
  }
}

bool ReportPusher::post(const std::string& url, const std::string& body, std::string* error) {
  net::HttpHeaders headers = {{"Content-Type", "application/json"}};
  if (!options_.token.empty()) headers.emplace_back("Authorization", "Bearer " + options_.token);
  auto status = connection_.post(url, body, headers, options_.timeout);
  if (!status) {
    *error = status.error().message;
    return false;
  }
  if (*status < 200 || *status >= 300) {
    *error = "HTTP " + std::to_string(*status);
    return false;
  }
  return true;
}

}  // namespace trainwatch::agent
