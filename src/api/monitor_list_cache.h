// The body of GET /api/v1/monitors, rebuilt incrementally. With 10,000 monitors a full
// serialisation costs tens of milliseconds; between two requests only the monitors
// checked in between changed, so each monitor's JSON is kept and only the monitors the
// engine reports as changed since the last render are serialised again.
//
// Even so, assembling 2 MB costs milliseconds, so requests share the last body (no copy)
// and one that finds it older than kMaxAge posts one rebuild to the cache's own thread
// rather than waiting for it: a list is at most kMaxAge plus one rebuild older than the
// engine, and no HTTP thread (nor the connections queued on it) waits for a rebuild.
// Thread-safe; memory is one string per monitor plus one body.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include <boost/asio/thread_pool.hpp>

#include "engine/engine.h"

namespace trainwatch::api {

class MonitorListCache {
 public:
  static constexpr Millis kMaxAge{500};

  std::shared_ptr<const std::string> body(const Engine& engine, MonoTime now);

 private:
  std::string render(const Engine& engine);
  std::shared_ptr<const std::string> publish(std::string body, MonoTime now);

  std::mutex build_mu_;  // one render at a time; guards the two fields below
  uint64_t seen_revision_ = 0;
  std::unordered_map<std::string, std::string> json_by_name_;

  std::mutex body_mu_;  // guards the published body
  std::shared_ptr<const std::string> body_;
  MonoTime built_at_{};
  bool rebuilding_ = false;

  boost::asio::thread_pool pool_{1};  // last: joined first, while the rest still exists
};

}  // namespace trainwatch::api
