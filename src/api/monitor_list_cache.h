// The body of GET /api/v1/monitors, rebuilt incrementally. With 10,000 monitors a full
// serialisation costs tens of milliseconds; between two renders only the monitors
// checked in between changed, so each monitor's JSON is kept and only the monitors the
// engine reports as changed since the last render are serialised again.
//
// Even so, assembling 2 MB costs milliseconds, so requests share the last body (no copy)
// through an http::TtlCache: one that finds it older than kMaxAge has it rebuilt in the
// background rather than waiting. A list is at most kMaxAge plus one rebuild older than
// the engine. Thread-safe; memory is one string per monitor plus one body per audience.
//
// Admins and the public read different lists (views/json_views.h): each monitor keeps its
// public JSON, and an admin's JSON only where the two differ (a URL with credentials, a
// cause quoting a body), so the second audience costs little.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/redaction.h"
#include "engine/engine.h"
#include "http/ttl_cache.h"

namespace trainwatch::api {

class MonitorListCache {
 public:
  static constexpr Millis kMaxAge{500};

  std::shared_ptr<const std::string> body(const engine::Engine& engine, Audience audience, MonoTime now);

 private:
  struct MonitorJson {
    std::string shown_to_public;
    std::string shown_to_admin;  // empty: the same as shown_to_public
  };
  std::string render(const engine::Engine& engine, Audience audience);

  std::mutex render_mu_;  // one render at a time; guards the two fields below
  uint64_t seen_revision_ = 0;
  std::unordered_map<std::string, MonitorJson> json_by_name_;

  http::TtlCache<std::string> bodies_{kMaxAge};  // last: its thread stops first
};

}  // namespace trainwatch::api
