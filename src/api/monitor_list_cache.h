// The body of GET /api/v1/monitors, rebuilt incrementally. With 10,000 monitors a full
// serialisation costs tens of milliseconds; between two renders only the monitors
// checked in between changed, so each monitor's JSON is kept and only the monitors the
// engine reports as changed since the last render are serialised again.
//
// Even so, assembling 2 MB costs milliseconds, so requests share the last body (no copy)
// through an http::FreshCache: a list includes every change of state (a monitor down,
// up, paused, added or deleted: Engine::state_generation) the engine had applied when
// the request arrived, and its latencies and check times are at most kMaxAge older than
// the request. A request that finds the body older waits for the one rebuild all such
// requests share. Thread-safe; memory is one string per monitor plus one body per audience.
//
// Admins and the public read different lists (views/json_views.h): each monitor keeps its
// public JSON, and an admin's JSON only where the two differ (a URL with credentials, a
// cause quoting a body), so the second audience costs little.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/redaction.h"
#include "engine/engine.h"
#include "http/fresh_cache.h"

namespace trainwatch::api {

class MonitorListCache {
 public:
  static constexpr Millis kMaxAge{500};
  using Body = http::FreshCache<std::string>::Value;

  // `engine` and `clock` must outlive the cache.
  MonitorListCache(const engine::Engine& engine, const Clock& clock);

  // Calls `deliver` with the body for `audience`, at once or from the cache's thread;
  // an error only when too many requests wait already ("cache.busy").
  void body(Audience audience, std::function<void(Result<Body>)> deliver);

 private:
  struct MonitorJson {
    std::string shown_to_public;
    std::string shown_to_viewer;  // empty: the same as shown_to_public
    std::string shown_to_admin;   // editors' and admins'; empty: the same as shown_to_public
  };
  std::string render(Audience audience);

  const engine::Engine& engine_;

  std::mutex render_mu_;  // one render at a time; guards the two fields below
  uint64_t seen_revision_ = 0;
  std::unordered_map<std::string, MonitorJson> json_by_name_;

  http::FreshCache<std::string> bodies_;  // last: its thread stops first
};

}  // namespace trainwatch::api
